import BatchRunKit
import Foundation
import TestSupport
import Testing

/// A flight, every supported property type among its columns.
struct Flight: Record, Equatable {
    static let entity = "Flight"
    var id: Int
    var number: String
    var delay: Double?
    var departs: Date
    var cancelled: Bool
    var seats: Int64
    var photo: Data?
    var gate: String?
}

/// A note whose key the store assigns (a nil `id` on insert).
struct Note: Record, Equatable {
    static let entity = "Note"
    var id: Int?
    var text: String
}

/// Issue 34: typed records, through the public API only.
@Suite("Typed records")
struct RecordTests {
    static let model = Model(entities: [
        Entity(name: "Flight", columns: [
            Column(name: "id", type: .integer, isPrimaryKey: true),
            Column(name: "number", type: .text, notNull: true),
            Column(name: "delay", type: .real),
            Column(name: "departs", type: .datetime),
            Column(name: "cancelled", type: .boolean),
            Column(name: "seats", type: .integer),
            Column(name: "photo", type: .blob),
            Column(name: "gate", type: .text),
        ], primaryKey: ["id"]),
        Entity(name: "Note", columns: [
            Column(name: "id", type: .integer, isPrimaryKey: true),
            Column(name: "text", type: .text),
        ], primaryKey: ["id"]),
    ])

    static func store(_ backend: Backend) throws -> (Store, URL) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("batchrun-records-\(UUID().uuidString)")
        switch backend {
        case .sqlite: return (try Store(path: folder.appendingPathComponent("r.sqlite").path, model: model), folder)
        case .postgres: return (try Store(postgres: PostgresServer.database("records"), model: model), folder)
        }
    }

    static let noon = Date(timeIntervalSince1970: 1_769_860_800)   // 2026-01-31T12:00:00Z

    static func flight(_ id: Int, _ number: String, delay: Double?, minutes: Double = 0, cancelled: Bool = false) -> Flight {
        Flight(id: id, number: number, delay: delay, departs: noon.addingTimeInterval(minutes * 60), cancelled: cancelled,
               seats: 180, photo: nil, gate: nil)
    }

    static func seed(_ store: Store, _ flights: [Flight]) async throws {
        try await Context(store: store, name: "seed").perform { context in
            for flight in flights { try context.insert(flight) }
            try context.save()
        }
    }

    @Test("every supported type round-trips through insert, fetch (private and main), update and delete; nil is NULL; a nil key is assigned", arguments: Backend.allCases)
    @MainActor
    func roundTrip(backend: Backend) async throws {
        let (store, folder) = try Self.store(backend)
        defer { try? FileManager.default.removeItem(at: folder) }
        let full = Flight(id: 1, number: "BA117", delay: 12.5, departs: Date(timeIntervalSince1970: 1_769_847_300.25), cancelled: true,
                          seats: 5_000_000_000, photo: Data([0, 1, 2, 255]), gate: "B32")
        let empty = Flight(id: 2, number: "LH400", delay: nil, departs: Self.noon, cancelled: false, seats: -1, photo: nil, gate: nil)
        try await Self.seed(store, [full, empty])
        try await Context(store: store, name: "notes").perform { context in
            try context.insert(Note(id: nil, text: "first"))
            try context.insert(Note(id: nil, text: "second"))
            try context.save()
        }

        let context = Context(store: store, name: "reader")
        let fromPrivate = try await context.perform { try $0.fetch(FetchRequest(Flight.self), as: Flight.self) }
        #expect(fromPrivate == [full, empty])
        let main = MainContext(store: store)
        #expect(try await main.fetch(FetchRequest(Flight.self), as: Flight.self) == [full, empty])
        #expect(try await main.fetch(FetchRequest(Note.self), as: Note.self) == [Note(id: 1, text: "first"), Note(id: 2, text: "second")])

        // As objects: nil is NULL, a Date ISO 8601 text, a Bool 1, Data a blob.
        let rows = try main.fetchNow(FetchRequest(entity: "Flight"))
        for column in ["delay", "photo", "gate"] { #expect(try rows[1][column] == .null) }
        #expect(try rows[0]["departs"] == "2026-01-31T08:15:00.250Z")
        #expect(try rows[0]["cancelled"] == 1)
        #expect(try rows[0]["photo"] == .blob([0, 1, 2, 255]))
        #expect(try rows[0]["seats"] == .integer(5_000_000_000))

        var changing = full
        changing.delay = nil
        changing.gate = "C1"
        var filling = empty
        filling.photo = Data([7])
        let changed = changing, filled = filling
        try await context.perform { context in
            try context.update(changed)
            try context.update(filled)
            try context.delete(full)       // then deleted: the delete wins
            try context.delete(empty)
            try context.save()
        }
        #expect(try await main.fetch(FetchRequest(Flight.self), as: Flight.self) == [])

        try await Self.seed(store, [full, empty])
        try await context.perform { context in
            try context.update(changed)
            try context.update(filled)
            try context.save()
        }
        await main.catchUp()
        #expect(try await main.fetch(FetchRequest(Flight.self), as: Flight.self) == [changed, filled])

        // The main context inserts, updates and deletes too; its fetch shows its unsaved update.
        var later = changed
        later.delay = 99
        try main.update(later)
        #expect(try await main.fetch(FetchRequest(Flight.self), as: Flight.self) == [later, filled])
        try main.delete(filled)
        try main.insert(Self.flight(3, "AF1", delay: 1))
        try main.save()
        let stored = try await context.perform { try $0.fetch(FetchRequest(Flight.self), as: Flight.self) }
        #expect(stored == [later, Self.flight(3, "AF1", delay: 1)])

        let missing = Self.flight(42, "XX42", delay: nil)
        #expect(throws: ContextError.self) { try main.update(missing) }
        do {
            try main.update(missing)
        } catch let error as ContextError {
            #expect("\(error)" == "no row Flight(42) to update: insert the record first, or fetch it again (it was deleted)")
        }
    }

    @Test("docs/library.md's typed-record example runs as written")
    @MainActor
    func docsExample() async throws {
        let (store, folder) = try Self.store(.sqlite)
        defer { try? FileManager.default.removeItem(at: folder) }
        let main = MainContext(store: store)
        // From here to `let flights`: docs/library.md, "Typed records".
        let context = Context(store: store, name: "ops", mergePolicy: .objectTrump)
        try await context.perform { context in
            try context.insert(Flight(id: 1, number: "BA117", delay: nil, departs: Date(), cancelled: false,
                                      seats: 180, photo: nil, gate: nil))
            try context.save()

            let delay = Attribute<Flight, Double?>("delay"), number = Attribute<Flight, String>("number")
            var request = FetchRequest(Flight.self, where: delay > 15 || number == "BA117")
            request.sortedBy = [delay.descending, number.ascending]
            for var flight in try context.fetch(request, as: Flight.self) {
                flight.gate = "B32"
                try context.update(flight)
            }
            try context.save()               // conflicts with other saves as objects' changes do
        }
        let flights = try await main.fetch(FetchRequest(Flight.self), as: Flight.self)
        #expect(flights.map(\.gate) == ["B32"])
    }

    /// Flight's columns with `delay` as text: a record whose property type the column refuses.
    struct TextDelay: Record {
        static let entity = "Flight"
        var id: Int
        var number: String
        var delay: String
    }

    @Test("a property of a type its column refuses throws ContextError.wrongType naming entity, column and type, on insert and update, and changes nothing")
    @MainActor
    func wrongType() async throws {
        let (store, folder) = try Self.store(.sqlite)
        defer { try? FileManager.default.removeItem(at: folder) }
        try await Self.seed(store, [Self.flight(1, "BA1", delay: 5)])
        let main = MainContext(store: store)
        for write in [{ try main.insert(TextDelay(id: 2, number: "BA2", delay: "late")) },
                      { try main.update(TextDelay(id: 1, number: "BA9", delay: "late")) }] {
            do {
                try write()
                Issue.record("no error")
            } catch ContextError.wrongType(let entity, let column, let expected, let given) {
                #expect(entity == "Flight" && column == "delay" && expected == .real && given == "late")
                let error = ContextError.wrongType(entity: entity, column: column, expected: expected, given: given)
                #expect("\(error)" == #"Flight.delay is real: text "late" does not fit it; give a real or an integer"#)
            }
        }
        #expect(try main.save().inserted == 0)
        #expect(try await main.fetch(FetchRequest(Flight.self), as: Flight.self) == [Self.flight(1, "BA1", delay: 5)])
    }

    /// A record with a property the entity has no column for.
    struct WithTerminal: Record {
        static let entity = "Flight"
        var id: Int
        var number: String
        var terminal: String?
    }

    /// Flight's `delay` as a non-optional: a NULL in the store does not fit it.
    struct RequiredDelay: Record {
        static let entity = "Flight"
        var id: Int
        var delay: Double
    }

    /// A record of an entity the model does not have.
    struct Stray: Record {
        static let entity = "Stray"
        var id: Int
    }

    @MainActor
    static func mismatch(_ body: @MainActor () async throws -> Void) async -> (column: String, text: String)? {
        do {
            try await body()
            return nil
        } catch ContextError.recordMismatch(let record, let entity, let column, let problem) {
            return (column, "\(ContextError.recordMismatch(record: record, entity: entity, column: column, problem: problem))")
        } catch {
            Issue.record("not a recordMismatch: \(error)")
            return nil
        }
    }

    /// Flight's `gate` as a struct: a property of a nested type, which no column holds.
    struct NestedGate: Record {
        static let entity = "Flight"
        struct Gate: Codable { var terminal: Int; var number: String }
        var id: Int
        var number: String
        var gate: Gate
    }

    @Test("a property of a nested type throws a mismatch naming its column, and the context's next records encode as before (the encoder's reused container)")
    @MainActor
    func nestedProperty() async throws {
        let (store, folder) = try Self.store(.sqlite)
        defer { try? FileManager.default.removeItem(at: folder) }
        let main = MainContext(store: store)
        try main.insert(Self.flight(1, "BA1", delay: 5))
        let nested = await Self.mismatch { try main.insert(NestedGate(id: 2, number: "BA2", gate: .init(terminal: 5, number: "A10"))) }
        #expect(nested?.column == "gate")
        #expect(nested?.text == "record NestedGate does not map onto entity Flight at gate: a Gate is not one value; use Int, Int64, Double, String, Bool, Date, Data, an optional, or an enum of one")
        let unknown = await Self.mismatch { try main.insert(WithTerminal(id: 3, number: "BA3", terminal: "5")) }
        #expect(unknown?.column == "terminal")
        try main.insert(Self.flight(4, "BA4", delay: 7))
        try main.insert(Self.flight(5, "BA5", delay: nil))
        #expect(try main.save().inserted == 3)
        let stored = try await main.fetch(FetchRequest(Flight.self), as: Flight.self)
        #expect(stored == [Self.flight(1, "BA1", delay: 5), Self.flight(4, "BA4", delay: 7), Self.flight(5, "BA5", delay: nil)])
    }

    @Test("a column missing from the entity, a NULL for a non-optional, a request of another entity and an unknown entity are clear errors, on write and read")
    @MainActor
    func mismatches() async throws {
        let (store, folder) = try Self.store(.sqlite)
        defer { try? FileManager.default.removeItem(at: folder) }
        try await Self.seed(store, [Self.flight(1, "BA1", delay: nil)])
        let main = MainContext(store: store)
        let context = Context(store: store, name: "reader")

        let onInsert = await Self.mismatch { try main.insert(WithTerminal(id: 2, number: "BA2", terminal: "5")) }
        #expect(onInsert?.column == "terminal")
        #expect(onInsert?.text == "record WithTerminal does not map onto entity Flight at terminal: the entity has no such column; add it to the model, or name a column in the record's CodingKeys")
        let onRead = await Self.mismatch { _ = try await main.fetch(FetchRequest(WithTerminal.self), as: WithTerminal.self) }
        #expect(onRead?.column == "terminal")
        let onPrivateRead = await Self.mismatch { _ = try await context.perform { try $0.fetch(FetchRequest(WithTerminal.self), as: WithTerminal.self) } }
        #expect(onPrivateRead?.column == "terminal")

        let null = await Self.mismatch { _ = try await main.fetch(FetchRequest(RequiredDelay.self), as: RequiredDelay.self) }
        #expect(null?.text == "record RequiredDelay does not map onto entity Flight at delay: NULL does not fit a non-optional Double; make the property optional")

        let otherEntity = await Self.mismatch { _ = try await main.fetch(FetchRequest(Note.self), as: Flight.self) }
        #expect(otherEntity?.text.contains("the request is of entity Note; make it with FetchRequest(Flight.self)") == true)

        do {
            try main.insert(Stray(id: 1))
            Issue.record("no error")
        } catch ContextError.unknownEntity(let name) {
            #expect(name == "Stray")
        }
        #expect(try main.save().inserted == 0)
    }

    @Test("records meet conflicts as objects do: a private context's record checked against the row as fetched, the main context's merge policy", arguments: Backend.allCases)
    @MainActor
    func conflicts(backend: Backend) async throws {
        let (store, folder) = try Self.store(backend)
        defer { try? FileManager.default.removeItem(at: folder) }
        let background = Context(store: store, name: "background")
        func backgroundDelay(_ delay: Double) async throws {
            try await background.perform { context in
                var flight = try context.fetch(FetchRequest(Flight.self), as: Flight.self)[0]
                flight.delay = delay
                flight.gate = "A1"
                try context.update(flight)
                try context.save()
            }
        }
        for policy in [MergePolicy.error, .storeTrump, .objectTrump] {
            try await Self.seed(store, [Self.flight(1, "BA1", delay: 0)])
            let context = Context(store: store, name: "editor", mergePolicy: policy)
            var flight = try await context.perform { try $0.fetch(FetchRequest(Flight.self), as: Flight.self)[0] }
            try await backgroundDelay(50)      // after the editor read the row
            flight.delay = 99
            let edited = flight
            let result: Result<SaveResult, any Error> = await context.perform { context in
                Result { try context.update(edited); return try context.save() }
            }
            let stored = try await background.perform { try $0.fetch(FetchRequest(Flight.self), as: Flight.self)[0] }
            switch (policy, result) {
            case (.error, .failure(let error)):
                #expect((error as? MergeConflictError)?.conflict.changedBy == "background")
                #expect(stored.delay == 50)
            case (.storeTrump, .success(let saved)):
                #expect(saved.conflicts.count == 1 && stored.delay == 50 && stored.gate == "A1")
            case (.objectTrump, .success(let saved)):
                #expect(saved.conflicts.count == 1 && stored.delay == 99 && stored.gate == "A1")
            default:
                Issue.record("\(policy): \(result)")
            }
            try await background.perform { context in
                try context.delete(stored)
                try context.save()
            }
        }

        // The main context: an unsaved record update meets a background save merged meanwhile.
        try await Self.seed(store, [Self.flight(1, "BA1", delay: 0)])
        let main = MainContext(store: store, mergePolicy: .objectTrump)
        var flight = try await main.fetch(FetchRequest(Flight.self), as: Flight.self)[0]
        flight.delay = 99
        try main.update(flight)
        try await backgroundDelay(50)
        await main.catchUp()
        let saved = try main.save()
        #expect(saved.conflicts.count == 1 && saved.conflicts.first?.policy == .objectTrump)
        let stored = try await main.fetch(FetchRequest(Flight.self), as: Flight.self)[0]
        #expect(stored.delay == 99 && stored.gate == "A1")
    }

    /// Another context's save of flight 1 changing `delay` (and nothing else).
    static func otherSavesDelay(_ store: Store, _ delay: Double) async throws {
        try await Context(store: store, name: "other").perform { context in
            let object = try #require(try context.existingObject(with: ObjectID(entity: "Flight", key: [1])))
            try object.set("delay", to: .real(delay))
            try context.save()
        }
    }

    static func stored(_ store: Store) async throws -> Flight {
        try await Context(store: store, name: "check").perform { try $0.fetch(FetchRequest(Flight.self), as: Flight.self)[0] }
    }

    @Test("issue 34: update writes only the columns the record changed since its fetch; a column another context saved meanwhile keeps its value, without a conflict (private context, after an intermediate save, main context)", arguments: Backend.allCases)
    @MainActor
    func updateLeavesOthersColumns(backend: Backend) async throws {
        let (store, folder) = try Self.store(backend)
        defer { try? FileManager.default.removeItem(at: folder) }
        try await Self.seed(store, [Self.flight(1, "BA1", delay: 0)])

        // A private context, in one save cycle.
        let editor = Context(store: store, name: "editor", mergePolicy: .error)
        var flight = try await editor.perform { try $0.fetch(FetchRequest(Flight.self), as: Flight.self)[0] }
        try await Self.otherSavesDelay(store, 50)
        flight.gate = "B32"
        let gated = flight
        let saved = try await editor.perform { context in
            try context.update(gated)
            return try context.save()
        }
        #expect(saved.conflicts.isEmpty && saved.updated == 1)
        var stored = try await Self.stored(store)
        #expect(stored.delay == 50 && stored.gate == "B32")

        // The same record updated again: only what changed since its last update is written.
        try await Self.otherSavesDelay(store, 60)
        flight.seats = 90
        let fewer = flight
        try await editor.perform { context in
            try context.update(fewer)
            try context.save()
        }
        stored = try await Self.stored(store)
        #expect(stored.delay == 60 && stored.gate == "B32" && stored.seats == 90)

        // A private context's update after an intermediate save of the same context (which
        // forgets the objects its fetch held): the object is read again, the record still
        // compared with its fetch.
        var second = try await editor.perform { try $0.fetch(FetchRequest(Flight.self), as: Flight.self)[0] }
        try await editor.perform { context in
            try context.insert(Note(id: nil, text: "between"))
            try context.save()
        }
        try await Self.otherSavesDelay(store, 70)
        second.number = "BA2"
        let renamed = second
        try await editor.perform { context in
            try context.update(renamed)
            try context.save()
        }
        stored = try await Self.stored(store)
        #expect(stored.delay == 70 && stored.number == "BA2" && stored.gate == "B32")

        // The main context, whose fetch registers nothing: the row is read again at the update.
        let main = MainContext(store: store, mergePolicy: .error)
        var shown = try await main.fetch(FetchRequest(Flight.self), as: Flight.self)[0]
        try await Self.otherSavesDelay(store, 80)
        await main.catchUp()
        shown.gate = "C7"
        try main.update(shown)
        let mainSaved = try main.save()
        #expect(mainSaved.conflicts.isEmpty)
        stored = try await Self.stored(store)
        #expect(stored.delay == 80 && stored.gate == "C7" && stored.number == "BA2")

        // Updated before the other save is merged, and saved after: still only its column.
        shown.cancelled = true
        try main.update(shown)
        try await Self.otherSavesDelay(store, 90)
        await main.catchUp()
        try main.save()
        stored = try await Self.stored(store)
        #expect(stored.delay == 90 && stored.cancelled && stored.gate == "C7")
    }

    @Test("issue 34: a column changed by the record and by another context since the fetch is a conflict naming it: .error throws, .objectTrump writes the record's value (private and main context)", arguments: Backend.allCases)
    @MainActor
    func updateConflictsOnSameColumn(backend: Backend) async throws {
        let (store, folder) = try Self.store(backend)
        defer { try? FileManager.default.removeItem(at: folder) }
        for policy in [MergePolicy.error, .objectTrump] {
            for useMain in [false, true] {
                try await Self.seed(store, [Self.flight(1, "BA1", delay: 0)])
                let main = MainContext(store: store, mergePolicy: policy)
                let editor = Context(store: store, name: "editor", mergePolicy: policy)
                var flight = useMain ? try await main.fetch(FetchRequest(Flight.self), as: Flight.self)[0]
                                     : try await editor.perform { try $0.fetch(FetchRequest(Flight.self), as: Flight.self)[0] }
                // Saved elsewhere, and seen by the main context (merged) and by the editor (its
                // object read again): neither may make the record's old value current.
                try await Self.otherSavesDelay(store, 50)
                await main.catchUp()
                if !useMain { try await editor.perform { _ = try $0.fetch(FetchRequest(entity: "Flight")) } }
                flight.delay = 99
                flight.gate = "D4"
                let edited = flight
                let result: Result<SaveResult, any Error>
                if useMain {
                    result = Result { try main.update(edited); return try main.save() }
                } else {
                    result = await editor.perform { context in Result { try context.update(edited); return try context.save() } }
                }
                let stored = try await Self.stored(store)
                switch (policy, result) {
                case (.error, .failure(let error)):
                    let conflict = try #require((error as? MergeConflictError)?.conflict, "\(error)")
                    #expect(conflict.properties.map(\.name).contains("delay"), "\(conflict.properties)")
                    #expect(conflict.properties.first { $0.name == "delay" }?.store == .real(50))
                    #expect(conflict.properties.first { $0.name == "delay" }?.original == .real(0))
                    #expect(stored.delay == 50 && stored.gate == nil)
                case (.objectTrump, .success(let saved)):
                    #expect(saved.conflicts.count == 1 && saved.conflicts.first?.properties.map(\.name).contains("delay") == true)
                    #expect(stored.delay == 99 && stored.gate == "D4")
                default:
                    Issue.record("\(policy), main \(useMain): \(result)")
                }
                try await Context(store: store, name: "cleanup").perform { context in
                    try context.delete(stored)
                    try context.save()
                }
            }
        }
    }

    @Test("records updated and deleted among many unsaved inserts find their insert by key (also after a key was set on an inserted object)")
    func updateAndDeletePendingInserts() async throws {
        let (store, folder) = try Self.store(.sqlite)
        defer { try? FileManager.default.removeItem(at: folder) }
        let context = Context(store: store, name: "loader")
        try await context.perform { context in
            for id in 1...2_000 { try context.insert(Self.flight(id, "F\(id)", delay: nil)) }
            try context.update(Self.flight(10, "TEN", delay: 1))
            try context.delete(Self.flight(11, "F11", delay: nil))
            try context.insert(Self.flight(2_001, "LATE", delay: nil))
            try context.update(Self.flight(2_001, "LATER", delay: 2))
            let object = try context.insert(into: "Flight", values: ["id": 5_000, "number": "MOVED", "departs": "2026-01-31T12:00:00.000Z"])
            try object.set("id", to: 5_001)
            try context.update(Self.flight(5_001, "MOVED", delay: 3))
            try context.delete(Self.flight(12, "F12", delay: nil))
        }
        // The update of a deleted insert found no row in the context nor in the store.
        await #expect(throws: ContextError.self) {
            try await context.perform { try $0.update(Self.flight(12, "GONE", delay: nil)) }
        }
        _ = try await context.perform { try $0.save() }
        let flights = try await context.perform { try $0.fetch(FetchRequest(Flight.self), as: Flight.self) }
        let byID = Dictionary(uniqueKeysWithValues: flights.map { ($0.id, $0) })
        #expect(flights.count == 2_000)
        #expect(byID[10]?.number == "TEN" && byID[10]?.delay == 1)
        #expect(byID[11] == nil && byID[12] == nil)
        #expect(byID[2_001]?.number == "LATER" && byID[5_001]?.delay == 3 && byID[5_000] == nil)
    }

    @Test("a Date compared in a typed filter matches the text StoreValue(Date) stored, and a record's Date matches StoreValue(Date) in SQL text", arguments: Backend.allCases)
    @MainActor
    func datesCompareAsStoreValueText(backend: Backend) async throws {
        let (store, folder) = try Self.store(backend)
        defer { try? FileManager.default.removeItem(at: folder) }
        let departs = Date(timeIntervalSince1970: 1_769_847_300.25)   // 2026-01-31T08:15:00.250Z
        try await Context(store: store, name: "seed").perform { context in
            try context.insert(into: "Flight", values: ["id": 1, "number": "OBJ", "departs": StoreValue(departs), "cancelled": 0, "seats": 1])
            try context.insert(Flight(id: 2, number: "REC", delay: nil, departs: departs, cancelled: false, seats: 1, photo: nil, gate: nil))
            try context.insert(Flight(id: 3, number: "LATER", delay: nil, departs: departs.addingTimeInterval(0.001), cancelled: false,
                                      seats: 1, photo: nil, gate: nil))
            try context.save()
        }
        let main = MainContext(store: store)
        let attribute = Attribute<Flight, Date>("departs")
        var typed = FetchRequest(Flight.self, where: attribute == departs)
        typed.sortedBy = [Attribute<Flight, Int>("id").ascending]
        #expect(try await main.fetch(typed, as: Flight.self).map(\.number) == ["OBJ", "REC"])
        var text = FetchRequest(entity: Flight.entity, where: "departs = :d", params: ["d": StoreValue(departs)])
        text.sortedBy = [.ascending("id")]
        #expect(try await main.fetch(text, as: Flight.self).map(\.number) == ["OBJ", "REC"])
        #expect(try await main.fetch(FetchRequest(Flight.self, where: attribute > departs), as: Flight.self).map(\.number) == ["LATER"])
    }

    @Test("typed filters and sorts return the right rows in the right order, as SQL text does, on both backends", arguments: Backend.allCases)
    @MainActor
    func filtersAndSorts(backend: Backend) async throws {
        let (store, folder) = try Self.store(backend)
        defer { try? FileManager.default.removeItem(at: folder) }
        try await Self.seed(store, [
            Self.flight(1, "BA1", delay: 30, minutes: 0), Self.flight(2, "AF2", delay: 10, minutes: 60),
            Self.flight(3, "LH3", delay: nil, minutes: 30, cancelled: true), Self.flight(4, "BA4", delay: 30, minutes: 90),
            Self.flight(5, "KL5", delay: 5, minutes: -30), Self.flight(6, "AF6", delay: 20, minutes: 120, cancelled: true),
        ])
        let delay = Attribute<Flight, Double?>("delay"), number = Attribute<Flight, String>("number")
        let departs = Attribute<Flight, Date>("departs"), cancelled = Attribute<Flight, Bool>("cancelled")
        let id = Attribute<Flight, Int>("id")
        let main = MainContext(store: store)
        let context = Context(store: store, name: "reader")
        let cases: [(RecordFilter<Flight>?, [RowRequest.Order], [Int])] = [
            (delay > 10, [], [1, 4, 6]),
            (delay >= 10, [delay.descending, number.ascending], [1, 4, 6, 2]),
            (delay == nil, [], [3]),
            (delay != nil && delay < 20, [delay.ascending], [5, 2]),
            (number == "BA1" || cancelled == true, [number.descending], [3, 1, 6]),
            (departs < Self.noon.addingTimeInterval(3600), [departs.ascending], [5, 1, 3]),
            (id != 3 && (cancelled == false || delay <= 20), [id.descending], [6, 5, 4, 2, 1]),
            (nil, [delay.ascending], [3, 5, 2, 6, 1, 4]),
        ]
        for (filter, sort, expected) in cases {
            var request = FetchRequest(Flight.self, where: filter)
            request.sortedBy = sort
            #expect(try await main.fetch(request, as: Flight.self).map(\.id) == expected, "\(expected)")
            let fixed = request
            #expect(try await context.perform { try $0.fetch(fixed, as: Flight.self) }.map(\.id) == expected, "\(expected)")
        }
        var limited = FetchRequest(Flight.self, where: delay > 0, limit: 2)
        limited.sortedBy = [delay.descending]
        #expect(try await main.fetch(limited, as: Flight.self).map(\.id) == [1, 4])
        #expect(try main.count(FetchRequest(Flight.self, where: cancelled == true)) == 2)
        // SQL text, the escape hatch.
        let sql = FetchRequest(entity: Flight.entity, where: "delay > :d AND number LIKE 'BA%'", params: ["d": 10])
        #expect(try await main.fetch(sql, as: Flight.self).map(\.id) == [1, 4])
    }
}
