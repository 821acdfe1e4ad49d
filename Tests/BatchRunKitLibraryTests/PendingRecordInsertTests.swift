import BatchRunKit
import Foundation
import TestSupport
import Testing

/// A reading whose `value` it leaves to the column's default.
struct Sample: Record, Equatable {
    static let entity = "Sample"
    var id: Int
    var sensor: String
}

/// A seat of a flight: a composite key of an integer and a text, declared in the other order.
struct Seat: Record, Equatable {
    static let entity = "Seat"
    var flight: Int
    var seat: String
    var passenger: String?
}

/// Record inserts with their keys given wait for their save as rows, not objects (the fast path
/// of `Context.insert(_ record:)`): everything a context does with inserts still sees them as
/// the objects they stand for, in insert order. Both databases, the public API only.
@Suite("Record inserts waiting as rows")
struct PendingRecordInsertTests {
    static let model = Model(entities: RecordTests.model.entities + [
        Entity(name: "Sample", columns: [
            Column(name: "id", type: .integer, isPrimaryKey: true),
            Column(name: "sensor", type: .text),
            Column(name: "value", type: .real, defaultLiteral: "2.5"),
        ], primaryKey: ["id"]),
        Entity(name: "Seat", columns: [
            Column(name: "flight", type: .integer),
            Column(name: "seat", type: .text),
            Column(name: "passenger", type: .text),
        ], primaryKey: ["seat", "flight"]),
    ])

    static func store(_ backend: Backend) throws -> (Store, URL) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("batchrun-pending-\(UUID().uuidString)")
        switch backend {
        case .sqlite: return (try Store(path: folder.appendingPathComponent("p.sqlite").path, model: model), folder)
        case .postgres: return (try Store(postgres: PostgresServer.database("pending"), model: model), folder)
        }
    }

    static func numbers(in store: Store) async throws -> [Int: String] {
        let flights = try await Context(store: store, name: "check").perform { try $0.fetch(FetchRequest(Flight.self), as: Flight.self) }
        return Dictionary(uniqueKeysWithValues: flights.map { ($0.id, $0.number) })
    }

    @Test("under overwrite the later insert of a key wins, whether a record or an object made it, across chunks of a save", arguments: Backend.allCases)
    func laterInsertWins(_ backend: Backend) async throws {
        let (store, folder) = try Self.store(backend)
        defer { try? FileManager.default.removeItem(at: folder) }
        let context = Context(store: store, name: "loader", mergePolicy: .overwrite)
        let result = try await context.perform { context in
            try context.insert(RecordTests.flight(1, "REC1", delay: nil))
            try context.insert(into: "Flight", values: ["id": 1, "number": "OBJ1", "departs": "2026-01-31T12:00:00.000Z",
                                                   "cancelled": false, "seats": 180])
            try context.insert(into: "Flight", values: ["id": 2, "number": "OBJ2", "departs": "2026-01-31T12:00:00.000Z",
                                                   "cancelled": false, "seats": 180])
            try context.insert(RecordTests.flight(2, "REC2", delay: nil))
            for id in 3...252 { try context.insert(RecordTests.flight(id, "F\(id)", delay: nil)) }
            try context.insert(RecordTests.flight(3, "DUP3", delay: 1))   // 250 rows later: another chunk
            try context.insert(RecordTests.flight(252, "DUP252", delay: nil))   // in the last one
            return try context.save()
        }
        let numbers = try await Self.numbers(in: store)
        #expect(numbers.count == 252)
        #expect(numbers[1] == "OBJ1" && numbers[2] == "REC2" && numbers[3] == "DUP3" && numbers[252] == "DUP252" && numbers[100] == "F100")
        #expect(Set(result.conflicts.map(\.objectID)) == Set([1, 2, 3, 252].map { ObjectID(entity: "Flight", key: [.integer(Int64($0))]) }))
        // Each key inserted once, the four written again updated.
        #expect(Set(result.didSave?.inserted["Flight"] ?? []).count == 252 && result.inserted == 252 && result.updated == 4)
    }

    @Test("a save refused by a conflict writes nothing and keeps the record inserts; the next save under another policy writes them", arguments: Backend.allCases)
    func refusedSaveKeepsRows(_ backend: Backend) async throws {
        let (store, folder) = try Self.store(backend)
        defer { try? FileManager.default.removeItem(at: folder) }
        try await RecordTests.seed(store, [RecordTests.flight(7, "OLD7", delay: nil)])
        let context = Context(store: store, name: "loader", mergePolicy: .error)
        try await context.perform { context in
            for id in 1...150 { try context.insert(RecordTests.flight(id, "N\(id)", delay: nil)) }
        }
        await #expect(throws: MergeConflictError.self) { try await context.perform { _ = try $0.save() } }
        #expect(try await Self.numbers(in: store) == [7: "OLD7"])
        #expect(await context.perform { $0.hasChanges })
        let result = try await context.perform { context in
            context.mergePolicy = .overwrite
            return try context.save()
        }
        let numbers = try await Self.numbers(in: store)
        #expect(numbers.count == 150 && numbers[7] == "N7" && numbers[150] == "N150")
        #expect(result.conflicts.map(\.objectID) == [ObjectID(entity: "Flight", key: [.integer(7)])])
        #expect(await context.perform { !$0.hasChanges })
    }

    @Test("asked for objects, the context gives the record inserts' objects in insert order: changed, deleted, rolled back, or registered after the save when it retains its objects", arguments: Backend.allCases)
    func objectsWhenAsked(_ backend: Backend) async throws {
        let (store, folder) = try Self.store(backend)
        defer { try? FileManager.default.removeItem(at: folder) }
        let context = Context(store: store, name: "loader")
        try await context.perform { context in
            try context.insert(into: "Sample", values: ["id": 1, "sensor": "object"])
            for id in 2...130 { try context.insert(Sample(id: id, sensor: "s\(id)")) }
            let objects = context.registeredObjects
            #expect(objects.count == 130)
            #expect(try objects.map { try $0["id"].int! } == Array(1...130))
            #expect(try objects[64]["sensor"] == "s65" && objects[64].hasChanges && objects[64].objectID == ObjectID(entity: "Sample", key: [.integer(65)]))
            try objects[9].set("sensor", to: "changed")
            try context.delete(Sample(id: 11, sensor: "s11"))
            try context.insert(Sample(id: 131, sensor: "after"))
            #expect(context.registeredObjects.count == 130)
            context.rollback()
            #expect(!context.hasChanges && context.registeredObjects.isEmpty)
            #expect(try context.save().inserted == 0)

            for id in 2...130 { try context.insert(Sample(id: id, sensor: "s\(id)")) }
            try context.registeredObjects[8].set("sensor", to: "changed")
            try context.delete(Sample(id: 11, sensor: "s11"))
            try context.insert(Sample(id: 131, sensor: "after"))
            #expect(try context.save().inserted == 129)
            #expect(context.registeredObjects.isEmpty)   // nobody held them

            // An object held beside record rows: it takes its row as stored, the rows are written.
            let held = try context.insert(into: "Sample", values: ["id": 300, "sensor": "held"])
            for id in 301...420 { try context.insert(Sample(id: id, sensor: "beside")) }
            #expect(try context.save().inserted == 121)
            #expect(try held["value"] == .real(2.5) && !held.hasChanges)
            #expect(context.registeredObjects.count == 1)

            context.retainsRegisteredObjects = true
            for id in 200...209 { try context.insert(Sample(id: id, sensor: "kept")) }
            #expect(try context.save().inserted == 10)
            let kept = context.registeredObjects.filter { $0 !== held }
            #expect(kept.count == 10)
            #expect(try kept.allSatisfy { try $0["value"] == .real(2.5) && !$0.hasChanges })   // the default, read back
        }
        let (sensors, values) = try await Context(store: store, name: "check").perform { context in
            let samples = try context.fetch(FetchRequest(entity: "Sample"))
            return (Dictionary(uniqueKeysWithValues: try samples.map { (try $0["id"].int!, try $0["sensor"].string!) }),
                    Set(try samples.map { try $0["value"] }))
        }
        #expect(sensors.count == 260 && sensors[10] == "changed" && sensors[11] == nil && sensors[131] == "after" && sensors[200] == "kept")
        #expect(sensors[300] == "held" && sensors[420] == "beside")
        #expect(values == [.real(2.5)])
    }

    @Test("records of another entity updated and deleted among waiting rows: every row and change is saved", arguments: Backend.allCases)
    func otherEntityAmongRows(_ backend: Backend) async throws {
        let (store, folder) = try Self.store(backend)
        defer { try? FileManager.default.removeItem(at: folder) }
        try await RecordTests.seed(store, [RecordTests.flight(1, "ONE", delay: nil), RecordTests.flight(2, "TWO", delay: nil)])
        let context = Context(store: store, name: "mixed")
        let result = try await context.perform { context in
            for id in 1...150 { try context.insert(Sample(id: id, sensor: "s\(id)")) }
            try context.update(RecordTests.flight(1, "UNO", delay: 5))
            try context.delete(RecordTests.flight(2, "TWO", delay: nil))
            for id in 151...200 { try context.insert(Sample(id: id, sensor: "s\(id)")) }
            return try context.save()
        }
        #expect(result.inserted == 200 && result.updated == 1 && result.deleted == 1)
        #expect(try await Self.numbers(in: store) == [1: "UNO"])
        let sensors = try await Context(store: store, name: "check").perform { context in
            try context.fetch(FetchRequest(entity: "Sample")).map { try $0["sensor"].string! }
        }
        #expect(sensors == (1...200).map { "s\($0)" })
    }

    @Test("composite keys of text and integer: the save's IDs name each row by its key in declared order, and an update before the save finds its row", arguments: Backend.allCases)
    func compositeKeys(_ backend: Backend) async throws {
        let (store, folder) = try Self.store(backend)
        defer { try? FileManager.default.removeItem(at: folder) }
        let context = Context(store: store, name: "seats")
        let result = try await context.perform { context in
            for flight in 1...3 {
                for row in 1...50 { try context.insert(Seat(flight: flight, seat: "\(row)A", passenger: nil)) }
            }
            try context.update(Seat(flight: 2, seat: "7A", passenger: "Ada"))
            return try context.save()
        }
        #expect(result.inserted == 150)
        let ids = Set(result.didSave?.inserted["Seat"] ?? [])
        #expect(ids.count == 150 && ids.contains(ObjectID(entity: "Seat", key: [.text("7A"), .integer(2)])))
        let seats = try await context.perform { try $0.fetch(FetchRequest(Seat.self), as: Seat.self) }
        #expect(seats.count == 150)
        #expect(seats.filter { $0.passenger != nil } == [Seat(flight: 2, seat: "7A", passenger: "Ada")])
    }

    @Test("keys the records gave come before the keys the store assigns next, in the same save and the next one", arguments: Backend.allCases)
    func assignedKeysFollow(_ backend: Backend) async throws {
        let (store, folder) = try Self.store(backend)
        defer { try? FileManager.default.removeItem(at: folder) }
        let context = Context(store: store, name: "notes")
        try await context.perform { context in
            for id in 1...150 { try context.insert(Note(id: id, text: "given")) }
            try context.save()
            try context.insert(Note(id: nil, text: "assigned"))
            for id in 200...210 { try context.insert(Note(id: id, text: "given")) }
            try context.save()
            try context.insert(Note(id: nil, text: "assigned later"))
            try context.save()
        }
        let notes = try await context.perform { try $0.fetch(FetchRequest(Note.self), as: Note.self) }
        #expect(notes.count == 163)
        let assigned = notes.filter { $0.text != "given" }.compactMap(\.id).sorted()
        #expect(assigned.count == 2 && assigned[0] > 150 && assigned[1] > 210)
    }
}
