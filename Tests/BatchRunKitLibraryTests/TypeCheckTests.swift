import BatchRunKit
import Foundation
import TestSupport
import Testing

/// Issue 34: every object write is checked against the column's declared type, as it is
/// written (`set`, `insert`): a wrong type throws `ContextError.wrongType` naming the entity,
/// the column, the type expected and the value given, and changes nothing.
@Suite("Type checks on writes")
struct TypeCheckTests {
    static let model = Model(entities: [
        Entity(name: "Reading", columns: [
            Column(name: "id", type: .integer, isPrimaryKey: true),
            Column(name: "sensor", type: .text),
            Column(name: "value", type: .real),
            Column(name: "taken_at", type: .datetime),
            Column(name: "ok", type: .boolean),
            Column(name: "raw", type: .blob),
            Column(name: "count", type: .integer),
        ], primaryKey: ["id"]),
    ])

    static func store(_ backend: Backend) throws -> (Store, URL) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("batchrun-types-\(UUID().uuidString)")
        switch backend {
        case .sqlite: return (try Store(path: folder.appendingPathComponent("t.sqlite").path, model: model), folder)
        case .postgres: return (try Store(postgres: PostgresServer.database("types"), model: model), folder)
        }
    }

    /// The parts of a `wrongType` error, or nil for any other outcome.
    static func wrongType(_ body: () throws -> Void) -> (entity: String, column: String, expected: ColumnType, given: StoreValue, text: String)? {
        do {
            try body()
            return nil
        } catch ContextError.wrongType(let entity, let column, let expected, let given) {
            return (entity, column, expected, given, "\(ContextError.wrongType(entity: entity, column: column, expected: expected, given: given))")
        } catch {
            Issue.record("not a wrongType error: \(type(of: error)) \(error)")
            return nil
        }
    }

    @Test("set throws for text into a real column, a Date into a real one, text that is no date into a datetime one, 2 into a boolean, a real into an integer; the value stays")
    @MainActor
    func setChecks() async throws {
        let (store, folder) = try Self.store(.sqlite)
        defer { try? FileManager.default.removeItem(at: folder) }
        let main = MainContext(store: store)
        let reading = try main.insert(into: "Reading", values: ["id": 1, "value": 1.5])
        let abc = try #require(Self.wrongType { try reading.set("value", to: "abc") })
        #expect(abc.entity == "Reading" && abc.column == "value" && abc.expected == .real && abc.given == "abc")
        #expect(abc.text == #"Reading.value is real: text "abc" does not fit it; give a real or an integer"#)
        let date = Date(timeIntervalSince1970: 1_769_847_300)
        let dated = try #require(Self.wrongType { try reading.set("value", to: StoreValue(date)) })
        #expect(dated.expected == .real && dated.given == StoreValue(date))
        let dayFirst = StoreValue.text("31/01/2026")
        let notADate = Self.wrongType { try reading.set("taken_at", to: dayFirst) }
        #expect(notADate?.column == "taken_at" && notADate?.expected == .datetime, "\(String(describing: try? reading["taken_at"]))")
        #expect(notADate?.text.hasSuffix("give a Date, or ISO 8601 text like 2026-01-31T08:15:00Z") == true)
        #expect(Self.wrongType { try reading.set("ok", to: 2) }?.expected == .boolean)
        #expect(Self.wrongType { try reading.set("count", to: 2.5) }?.expected == .integer)
        #expect(Self.wrongType { try reading.set("sensor", to: 7) }?.expected == .text)
        #expect(Self.wrongType { try reading.set("raw", to: "bytes") }?.expected == .blob)
        #expect(try reading["value"] == .real(1.5), "a refused value changes nothing")
        #expect(try reading["taken_at"] == .null)
    }

    @Test("values that fit are written, an integer into a real column as a real, and read back as written", arguments: Backend.allCases)
    @MainActor
    func fittingValues(backend: Backend) async throws {
        let (store, folder) = try Self.store(backend)
        defer { try? FileManager.default.removeItem(at: folder) }
        let main = MainContext(store: store)
        let date = Date(timeIntervalSince1970: 1_769_847_300.25)
        let reading = try main.insert(into: "Reading", values: ["id": 1, "sensor": "s1", "value": 3, "taken_at": StoreValue(date),
                                                                "ok": true, "raw": StoreValue(Data([1, 2])), "count": 4])
        #expect(try reading["value"] == .real(3))
        try reading.set("taken_at", to: "2026-02-01")
        try reading.set("ok", to: nil)
        try main.save()
        let read = try #require(try main.fetchNow(FetchRequest(entity: "Reading")).first)
        #expect(try read["value"] == .real(3) && read["sensor"] == "s1" && read["count"] == 4 && read["ok"] == .null)
        #expect(try read["taken_at"].date == ISO8601DateFormatter().date(from: "2026-02-01T00:00:00Z"))
        #expect(try read["raw"].data == Data([1, 2]))
    }

    @Test("insert checks every value before anything is inserted; a private context checks as the main one does")
    func insertChecks() async throws {
        let (store, folder) = try Self.store(.sqlite)
        defer { try? FileManager.default.removeItem(at: folder) }
        let context = Context(store: store, name: "import")
        let seen = await context.perform { context -> (error: String?, changes: Bool) in
            let error = Self.wrongType { _ = try context.insert(into: "Reading", values: ["id": 1, "value": "12,5"]) }
            return (error?.text, context.hasChanges)
        }
        #expect(seen.error == #"Reading.value is real: text "12,5" does not fit it; give a real or an integer"#)
        #expect(!seen.changes, "the refused insert left nothing to save")
        let saved = try await context.perform { context -> Int in
            let reading = try context.insert(into: "Reading", values: ["id": 2, "value": 12.5])
            try context.save()
            guard Self.wrongType({ try reading.set("sensor", to: .blob([1])) }) != nil else { return -1 }
            return try context.count(FetchRequest(entity: "Reading"))
        }
        #expect(saved == 1)
    }
}
