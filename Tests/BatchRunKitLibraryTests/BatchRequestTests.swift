import BatchRunKit
import Foundation
import Testing

/// Core Data's batch insert, update and delete requests, through the public API only, on both
/// databases: counts, batches, conflicts resolved by the context's policy, a hot swap.
@Suite("Batch requests from the library")
struct BatchRequestTests {
    /// Every session's id and minutes, in key order, read back through a fresh context.
    static func minutes(in store: Store) async throws -> [Int: Double] {
        let context = Context(store: store, name: "check")
        return try await context.perform { context in
            var result: [Int: Double] = [:]
            for object in try context.fetch(FetchRequest(entity: "Session")) {
                result[try object["id"].int!] = try object["minutes"].double
            }
            return result
        }
    }

    @Test("insert in batches, update and delete the rows a where matches", arguments: Backend.allCases)
    func insertUpdateDelete(_ backend: Backend) async throws {
        let sessions = try SessionStore(backend)
        defer { sessions.cleanUp() }
        let context = Context(store: sessions.store, name: "batches")
        let rows: [[String: StoreValue]] = (1...1_000).map { ["id": StoreValue($0), "user": StoreValue("u\($0 % 7)"), "minutes": StoreValue(Double($0))] }
        let inserted = try await context.perform { try $0.execute(BatchInsertRequest(entity: "Session", rows: rows, batchSize: 100)) }
        #expect(inserted.rows.inserted == 1_000)
        #expect(inserted.batches == 10)
        #expect(inserted.conflicts.isEmpty)

        let updated = try await context.perform {
            try $0.execute(BatchUpdateRequest(entity: "Session", set: ["minutes": "minutes * 2"], where: "id % 2 = :zero",
                                              params: ["zero": 0], batchSize: 64))
        }
        #expect(updated.rows.updated == 500)
        #expect(updated.batches == 8)
        let deleted = try await context.perform { try $0.execute(BatchDeleteRequest(entity: "Session", where: "id > 900")) }
        #expect(deleted.rows.deleted == 100)

        let stored = try await Self.minutes(in: sessions.store)
        #expect(stored.count == 900)
        #expect(stored[2] == 4 && stored[3] == 3 && stored[900] == 1_800 && stored[901] == nil)
    }

    @Test("taken keys are constraint conflicts resolved by the context's policy", arguments: Backend.allCases)
    func constraintConflicts(_ backend: Backend) async throws {
        let sessions = try SessionStore(backend)
        defer { sessions.cleanUp() }
        try await sessions.seed(5, minutes: 10)
        let context = Context(store: sessions.store, name: "feed", mergePolicy: .objectTrump)
        let rows: [[String: StoreValue]] = (4...8).map { ["id": StoreValue($0), "user": "new", "minutes": 99] }
        let result = try await context.perform { try $0.execute(BatchInsertRequest(entity: "Session", rows: rows)) }
        #expect(result.rows.inserted == 3)
        #expect(result.conflicts.count == 2)
        #expect(Array(result.conflicts).map(\.outcome) == [.keptOurs, .keptOurs])
        let stored = try await Self.minutes(in: sessions.store)
        #expect(stored == [1: 10, 2: 10, 3: 10, 4: 99, 5: 99, 6: 99, 7: 99, 8: 99])

        let strict = Context(store: sessions.store, name: "strict")
        await #expect(throws: MergeConflictError.self) {
            try await strict.perform { try $0.execute(BatchInsertRequest(entity: "Session", rows: [["id": 1, "user": "x"]])) }
        }
    }

    @Test("replacingAll swaps the table's rows in one transaction", arguments: Backend.allCases)
    func hotSwap(_ backend: Backend) async throws {
        let sessions = try SessionStore(backend)
        defer { sessions.cleanUp() }
        try await sessions.seed(50)
        let context = Context(store: sessions.store, name: "swap")
        let rows: [[String: StoreValue]] = (100...102).map { ["id": StoreValue($0), "user": "fresh", "minutes": 1] }
        let result = try await context.perform {
            try $0.execute(BatchInsertRequest(entity: "Session", rows: rows, replacingAll: true, batchSize: 2))
        }
        #expect(result.rows.inserted == 3)
        #expect(try await Self.minutes(in: sessions.store) == [100: 1, 101: 1, 102: 1])
    }

    @Test("an unknown entity throws and changes nothing")
    func unknownEntity() async throws {
        let sessions = try SessionStore(.sqlite)
        defer { sessions.cleanUp() }
        let context = Context(store: sessions.store, name: "typo")
        await #expect(throws: ContextError.self) {
            try await context.perform { try $0.execute(BatchDeleteRequest(entity: "Sesion", where: nil)) }
        }
    }
}
