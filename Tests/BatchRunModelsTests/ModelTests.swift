import BatchRunKit
@testable import BatchRunModels
import Foundation
import TestSupport
import Testing

/// Issue 49: `@Model` classes as SwiftData users write them, on both backends: one declaration
/// is the schema, `#Filter` is checked by the compiler, relationships walk, changes are tracked.
@Suite("Models (@Model, #Filter)")
struct ModelTests {
    enum Backend: String, CaseIterable, Sendable { case sqlite, postgres }

    static func model() throws -> Model {
        try Model(Airline.self, Flight.self, Pilot.self, Lounge.self, Employee.self, columnNames: .snakeCase)
    }

    static func store(_ backend: Backend) throws -> Store {
        switch backend {
        case .sqlite:
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("batchrun-models-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            return try Store(path: folder.appendingPathComponent("air.sqlite").path, model: model())
        case .postgres:
            return try Store(postgres: PostgresServer.database("models"), model: model())
        }
    }

    static let noon = Date(timeIntervalSince1970: 1_769_860_800)   // 2026-01-31T12:00:00Z

    @Test("the declaration is the schema: columns in snake_case with their types, NULLs, key, unique, default and indexes; relationships with the inverse's delete rule")
    func schema() throws {
        let model = try Self.model()
        let flight = try #require(model["Flight"])
        #expect(flight.columns.map(\.name) == ["id", "number", "delay", "departs", "seats", "cancelled", "airline_id", "captain_id"])
        #expect(flight.columns.map(\.type) == [.integer, .text, .real, .datetime, .integer, .boolean, .integer, .integer])
        #expect(flight.columns.map(\.notNull) == [false, true, false, true, true, true, false, false])
        #expect(flight.primaryKey == ["id"])
        #expect(flight.columns[1].isUnique && !flight.columns[2].isUnique)
        #expect(flight.columns[4].defaultLiteral == "180" && flight.columns[5].defaultLiteral == "false")
        let rules = flight.relationships.map { "\($0.name) \($0.destination) \($0.column) \($0.inverse ?? "-") \($0.deleteRule)" }
        #expect(rules == ["airline Airline airline_id flights cascade", "captain Pilot captain_id flights deny"])
        let lounge = try #require(model["Lounge"])
        #expect(lounge.relationships.map(\.deleteRule) == [.nullify])
        #expect(ColumnNaming.snakeCase.column(for: "departsAtURL") == "departs_at_url")
        #expect(ColumnNaming.asWritten.foreignKey(for: "airline") == "airlineID")
        // A relationship to a model that is not given: refused, naming it.
        #expect(throws: ModelError.schema("Flight.airline relates to Airline, which is not among the models given")) {
            try Model(Flight.self, Pilot.self)
        }
    }

    @Test("insert a graph, save, fetch with #Filter through a relationship, sorted and limited; the store's key given back", arguments: Backend.allCases)
    func insertAndFetch(backend: Backend) async throws {
        let store = try Self.store(backend)
        let context = Context(store: store, name: "ops")
        let numbers = try await context.perform { context in
            let united = Airline(id: 1, name: "UA"), british = Airline(id: 2, name: "BA")
            let late = Flight(number: "UA90", departs: Self.noon, airline: united)
            late.delay = 45
            try context.insert(late)                                   // its airline too
            try context.insert(Flight(number: "UA91", departs: Self.noon.addingTimeInterval(3_600), airline: united))
            british.flights = [Flight(number: "BA117", departs: Self.noon), Flight(number: "BA118", departs: Self.noon)]
            try context.insert(british)                                // its flights too, pointing at it
            #expect(late.id == nil)
            try context.save()
            #expect(late.id != nil, "the key the store assigned, read back from the row")

            let ua = try context.fetch(FetchDescriptor(filter: #Filter<Flight> { $0.airline?.name == "UA" }, sortBy: [ModelSort(\.number, order: .reverse)]))
            #expect(ua.map(\.number) == ["UA91", "UA90"])
            let delayed = try context.fetch(FetchDescriptor(filter: #Filter<Flight> { $0.delay! > 10 && $0.seats >= 180 }))
            #expect(delayed.map(\.number) == ["UA90"] && delayed[0] === late, "one instance per row in a context")
            let limit = 1
            let first = try context.fetch(FetchDescriptor<Flight>(sortBy: [ModelSort(\.number)], fetchLimit: limit))
            #expect(first.map(\.number) == ["BA117"])
            return try context.fetch(FetchDescriptor(filter: #Filter<Flight> { !($0.delay == nil) || $0.number.like("BA%") }, sortBy: [ModelSort(\.number)])).map(\.number)
        }
        #expect(numbers == ["BA117", "BA118", "UA90"])
        let names = ["UA", "XX"]
        let listed = try await context.perform { context in
            try context.fetch(FetchDescriptor(filter: #Filter<Airline> { names.contains($0.name) })).map(\.name)
        }
        #expect(listed == ["UA"])
    }

    @Test("walk relationships both ways; change a fetched model and save() writes it, no update call; another context sees it", arguments: Backend.allCases)
    func walkAndTrack(backend: Backend) async throws {
        let store = try Self.store(backend)
        let context = Context(store: store, name: "ops")
        try await context.perform { context in
            let airline = Airline(id: 1, name: "UA")
            airline.flights = [Flight(number: "UA90", departs: Self.noon), Flight(number: "UA91", departs: Self.noon)]
            try context.insert(airline)
            try context.insert(Pilot(id: 7, name: "Ada"))
            try context.save()
        }
        try await Context(store: store, name: "crew").perform { context in
            let flight = try #require(try context.fetch(FetchDescriptor(filter: #Filter<Flight> { $0.number == "UA90" })).first)
            let airline = try #require(flight.airline)
            #expect(airline.name == "UA" && airline.flights.map(\.number) == ["UA90", "UA91"])
            #expect(airline.flights.first === flight, "the same instance, walked back")
            let pilot = try #require(try context.fetch(FetchDescriptor<Pilot>()).first)
            flight.captain = pilot
            flight.delay = 12.5
            #expect(flight.modelBacking.hasChanges)
            try context.save()
        }
        let seen = try await Context(store: store, name: "check").perform { context in
            let flight = try #require(try context.fetch(FetchDescriptor(filter: #Filter<Flight> { $0.captain?.name == "Ada" })).first)
            return "\(flight.number) \(flight.delay ?? 0) \(flight.captain?.flights.count ?? 0)"
        }
        #expect(seen == "UA90 12.5 1")
    }

    @Test("walking a relationship from many fetched models reads its rows once, not once a model (batch faulting), the context's own changes seen", arguments: Backend.allCases)
    func batchedWalk(backend: Backend) async throws {
        let store = try Self.store(backend)
        let context = Context(store: store, name: "ops")
        try await context.perform { context in
            let airlines = (1...5).map { Airline(id: $0, name: "A\($0)") }
            for index in 0..<50 { try context.insert(Flight(number: "F\(index)", departs: Self.noon, airline: airlines[index % 5])) }
            try context.save()
        }
        try await Context(store: store, name: "walk").perform { context in
            let flights = try context.fetch(FetchDescriptor<Flight>(sortBy: [ModelSort(\.number)]))
            let before = context.core.reads
            let names = Set(flights.compactMap { $0.airline?.name })
            #expect(names.count == 5)
            #expect(context.core.reads - before == 1, "one read for the five airlines of fifty flights")
        }
        try await Context(store: store, name: "back").perform { context in
            let airlines = try context.fetch(FetchDescriptor<Airline>(sortBy: [ModelSort(\.id)]))
            let before = context.core.reads
            let counts = airlines.map { $0.flights.count }
            #expect(counts == [10, 10, 10, 10, 10])
            #expect(context.core.reads - before == 1, "one read for the flights of five airlines")
            // The context's own changes count, as they do for a to-many read alone.
            airlines[0].flights[0].airline = airlines[1]
            #expect(airlines.map { $0.flights.count } == [9, 11, 10, 10, 10])
            #expect(context.core.reads - before == 1)
            // Saved, they still count: what was read ahead is read again after a save.
            try context.insert(Flight(number: "NEW", departs: Self.noon, airline: airlines[0]))
            try context.save()
            #expect(airlines.map { $0.flights.count } == [10, 11, 10, 10, 10])
        }
    }

    @Test("#Filter and NULL as Swift has it: != and !(==) keep nil, nil through a to-one is nil when it points nowhere, a to-one !== a model keeps nil", arguments: Backend.allCases)
    func filtersAndNull(backend: Backend) async throws {
        let store = try Self.store(backend)
        let numbers = try await Context(store: store, name: "ops").perform { context -> [String] in
            let ada = Pilot(id: 1, name: "Ada"), bob = Pilot(id: 2, name: "Bob")
            let none = Flight(number: "N", departs: Self.noon), five = Flight(number: "F", departs: Self.noon), seven = Flight(number: "S", departs: Self.noon)
            five.delay = 5
            seven.delay = 7
            five.captain = ada
            seven.captain = bob
            for flight in [none, five, seven] { try context.insert(flight) }
            try context.save()
            return try [
                Self.numbers(#Filter<Flight> { $0.delay != 5 }, in: context),
                Self.numbers(#Filter<Flight> { !($0.delay == 5) }, in: context),
                Self.numbers(#Filter<Flight> { !($0.delay! > 6) }, in: context),
                Self.numbers(#Filter<Flight> { $0.captain?.name == nil }, in: context),
                Self.numbers(#Filter<Flight> { $0.captain?.name != nil }, in: context),
                Self.numbers(#Filter<Flight> { $0.captain !== ada }, in: context),
                Self.numbers(#Filter<Flight> { $0.captain === ada }, in: context),
                Self.numbers(#Filter<Flight> { $0.captain?.name != "Ada" }, in: context),
            ]
        }
        #expect(numbers == ["NS", "NS", "FN", "N", "FS", "NS", "F", "NS"])
    }

    /// The numbers of the flights a filter fetches, in order, joined.
    static func numbers(_ filter: ModelFilter<Flight>, in context: isolated Context) throws -> String {
        try context.fetch(FetchDescriptor(filter: filter, sortBy: [ModelSort(\.number)])).map(\.number).joined()
    }

    @Test("a model whose row met a conflict its context's policy resolved keeps working: its next change is saved (the context let go of the object; the model finds the row again)")
    @MainActor
    func afterAResolvedConflict() async throws {
        let store = try Self.store(.sqlite)
        let setup = MainContext(store: store)
        try setup.insert(Flight(number: "UA90", departs: Self.noon))
        _ = try setup.save()
        let ours = MainContext(store: store, mergePolicy: .objectTrump), theirs = MainContext(store: store)
        let ua90 = FetchDescriptor(filter: #Filter<Flight> { $0.number == "UA90" })
        let flight = try #require(try await ours.fetch(ua90).first)
        flight.delay = 1
        let other = try #require(try await theirs.fetch(ua90).first)
        other.delay = 2
        _ = try theirs.save()
        _ = try ours.save()
        flight.delay = 7
        _ = try ours.save()
        let saved = try await Context(store: store, name: "check").perform { context in try context.fetch(ua90).map { $0.delay ?? 0 } }
        #expect(saved == [7])
    }

    @Test("related(_:of:) reads as the properties do, and throws a failed read (an interrupt) instead of stopping the program", arguments: Backend.allCases)
    func relatedThrows(backend: Backend) async throws {
        let store = try Self.store(backend)
        try await Context(store: store, name: "ops").perform { context in
            try context.insert(Flight(number: "UA90", departs: Self.noon, airline: Airline(id: 1, name: "UA")))
            try context.save()
        }
        let walk = Context(store: store, name: "walk")
        try await walk.perform { context in
            let flight = try context.fetch(FetchDescriptor<Flight>())[0]
            let airline = try #require(try context.related(\Flight.airline, of: flight))
            let flights = try context.related(\Airline.flights, of: airline)
            #expect(airline.name == "UA" && flights.map(\.number) == ["UA90"])
            let other = try context.fetch(FetchDescriptor<Lounge>())
            #expect(other.isEmpty)
        }
        try await Context(store: store, name: "stopped").perform { context in
            let flight = try context.fetch(FetchDescriptor<Flight>())[0]
            context.interrupt()
            #expect(throws: (any Error).self) { try context.related(\Flight.airline, of: flight) }
        }
    }

    @Test("delete rules from the to-many side: cascade deletes the flights, nullify empties the lounge's airline, deny refuses while flights point at the pilot", arguments: Backend.allCases)
    func deleteRules(backend: Backend) async throws {
        let store = try Self.store(backend)
        let context = Context(store: store, name: "ops")
        try await context.perform { context in
            let airline = Airline(id: 1, name: "UA"), pilot = Pilot(id: 7, name: "Ada")
            let flight = Flight(number: "UA90", departs: Self.noon, airline: airline)
            flight.captain = pilot
            try context.insert(flight)
            try context.insert(Lounge(id: 3, airline: airline))
            try context.save()

            context.delete(pilot)
            #expect(throws: ContextError.self) { try context.save() }
            context.rollback()

            context.delete(airline)
            try context.save()
            #expect(try context.fetch(FetchDescriptor<Flight>()).isEmpty, "cascade")
            let lounge = try #require(try context.fetch(FetchDescriptor<Lounge>()).first)
            #expect(lounge.airline == nil, "nullify")
            context.delete(pilot)
            try context.save()
            #expect(try context.fetch(FetchDescriptor<Pilot>()).isEmpty, "no flight points at the pilot any more")
        }
    }

    @Test("conflicts by property: two contexts change different columns of a flight and both are kept; the same column under .error throws naming it", arguments: Backend.allCases)
    func conflicts(backend: Backend) async throws {
        let store = try Self.store(backend)
        try await Context(store: store, name: "setup").perform { context in
            try context.insert(Flight(number: "UA90", departs: Self.noon))
            try context.save()
        }
        let ops = Context(store: store, name: "ops"), crew = Context(store: store, name: "crew")
        let ua90 = FetchDescriptor(filter: #Filter<Flight> { $0.number == "UA90" })
        try await ops.perform { context in try context.fetch(ua90)[0].delay = 5 }
        try await crew.perform { context in
            try context.fetch(ua90)[0].seats = 100
            try context.save()
        }
        try await ops.perform { context in _ = try context.save() }
        let row = try await Context(store: store, name: "check").perform { context in
            try context.fetch(ua90).map { "\($0.delay ?? 0) \($0.seats)" }
        }
        #expect(row == ["5.0 100"], "each context's column kept")

        try await ops.perform { context in try context.fetch(ua90)[0].seats = 1 }
        try await crew.perform { context in
            try context.fetch(ua90)[0].seats = 2
            try context.save()
        }
        _ = await ops.perform { context in
            #expect(throws: MergeConflictError.self) { _ = try context.save() }
        }
    }

    @Test("graphs: a cycle of to-ones and a model pointing at itself are inserted; a missing key refuses the whole insert, nothing half-inserted; after rollback, inserted anew", arguments: Backend.allCases)
    func graphs(backend: Backend) async throws {
        let store = try Self.store(backend)
        try await Context(store: store, name: "ops").perform { context in
            let ada = Employee(id: 1, name: "Ada"), bob = Employee(id: 2, name: "Bob"), cy = Employee(id: 3, name: "Cy")
            ada.manager = bob
            bob.manager = ada
            cy.manager = cy
            try context.insert(ada)
            try context.insert(cy)
            try context.save()
            let managers = try context.fetch(FetchDescriptor<Employee>(sortBy: [ModelSort(\.id)])).map { $0.manager?.name ?? "-" }
            #expect(managers == ["Bob", "Ada", "Cy"])

            // The flight's key is the store's to assign at the save: the employee cannot point at it yet.
            let dee = Employee(id: 7, name: "Dee")
            dee.manager = Employee(id: 8, name: "Eve")
            dee.lastFlight = Flight(number: "XX1", departs: Self.noon)
            #expect(throws: ModelError.keyNotAssigned(model: "Flight", relationship: "Employee.lastFlight")) { try context.insert(dee) }
            let changed = context.hasChanges
            #expect(!changed, "nothing of the graph inserted, not even Eve")

            let lounge = Lounge(id: 4, airline: nil)
            try context.insert(lounge)
            context.rollback()
            try context.insert(lounge)                 // the rolled-back insert, inserted anew
            try context.save()
            #expect(try context.fetch(FetchDescriptor<Lounge>()).map(\.id) == [4])
        }
    }

    @Test("a model of one main context inserted into another is refused, naming it")
    @MainActor
    func otherContext() async throws {
        let store = try Self.store(.sqlite)
        let one = MainContext(store: store), two = MainContext(store: store)
        let lounge = Lounge(id: 1, airline: nil)
        try one.insert(lounge)
        #expect(throws: ModelError.otherContext("Lounge")) { try two.insert(lounge) }
    }

    @Test("a store whose entity of a model's name was made otherwise is refused at the first fetch or insert, not read wrong")
    func entityMadeOtherwise() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("batchrun-models-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let store = try Store(path: folder.appendingPathComponent("other.sqlite").path, model: Model(entities: [
            Entity(name: "Lounge", columns: [Column(name: "id", type: .integer, isPrimaryKey: true), Column(name: "name", type: .text)], primaryKey: ["id"]),
        ]))
        let expected = ModelError.schema("the store's entity Lounge is not the one Model(Lounge.self) makes: open the store with Model(_:) of the @Model classes")
        await Context(store: store, name: "ops").perform { context in
            #expect(throws: expected) { try context.fetch(FetchDescriptor<Lounge>()) }
            #expect(throws: expected) { try context.insert(Lounge(id: 1, airline: nil)) }
        }
    }

    @Test("a stored value the property cannot take is a typed error at the fetch, naming the property and the row")
    func storedValueMismatch() async throws {
        let store = try Self.store(.sqlite)
        let context = Context(store: store, name: "ops")
        try await context.perform { context in
            try context.insert(Flight(number: "UA90", departs: Self.noon))
            try context.save()
            // SQLite keeps text that is no number in an integer column as text.
            _ = try context.execute(BatchUpdateRequest(entity: "Flight", set: ["seats": "'many'"]))
            #expect(throws: ModelError.storedValue(model: "Flight", property: "seats", key: 1, value: "many")) {
                try context.fetch(FetchDescriptor<Flight>())
            }
        }
    }

    @Test("#Filter renders each form as SQL with parameters: comparisons both ways round, ==/!= nil, !, ||, like, contains, a Bool alone, through a to-one")
    func filterSQL() throws {
        let model = try Self.model()
        func sql(_ filter: ModelFilter<Flight>) throws -> String {
            var params: [String: StoreValue] = [:]
            let text = try filter.render(model, &params)
            return text + " " + params.keys.sorted().map { "\($0)=\(params[$0]!)" }.joined(separator: ",")
        }
        #expect(try sql(#Filter<Flight> { 10 < $0.delay! }) == #"("delay" IS NOT NULL AND "delay" > :_batchrun_m0) _batchrun_m0=10.0"#)
        #expect(try sql(#Filter<Flight> { $0.delay == nil || $0.captain != nil }) == #"("delay" IS NULL OR "captain_id" IS NOT NULL) "#)
        #expect(try sql(#Filter<Flight> { !$0.cancelled }) == #"(NOT "cancelled" = :_batchrun_m0) _batchrun_m0=1"#)
        #expect(try sql(#Filter { (flight: Flight) in flight.airline!.name.like("U%") })
                == #"("airline_id" IS NOT NULL AND "airline_id" IN (SELECT "id" FROM "Airline" WHERE "name" LIKE :_batchrun_m0)) _batchrun_m0=U%"#)
        // As in Swift, nil is not equal to a value: `<>` on an optional column keeps NULL, and
        // through a relationship a flight with no airline is not "UA".
        #expect(try sql(#Filter<Flight> { $0.delay != 5 }) == #"("delay" IS NULL OR "delay" <> :_batchrun_m0) _batchrun_m0=5.0"#)
        #expect(try sql(#Filter<Flight> { $0.number != "x" }) == #""number" <> :_batchrun_m0 _batchrun_m0=x"#)
        #expect(try sql(#Filter<Flight> { $0.airline?.name != "UA" })
                == #"(NOT ("airline_id" IS NOT NULL AND "airline_id" IN (SELECT "id" FROM "Airline" WHERE "name" = :_batchrun_m0))) _batchrun_m0=UA"#)
        // A value that reads a variable named like a property, or the parameter's name as a member, is a value.
        let f = "UA90"
        #expect(try sql(#Filter { (f: Flight) in f.number == "UA90" }) == #""number" = :_batchrun_m0 _batchrun_m0=UA90"#)
        #expect(try sql(#Filter<Flight> { $0.number == f }) == #""number" = :_batchrun_m0 _batchrun_m0=UA90"#)
        #expect(try sql(#Filter<Flight> { [100, 180].contains($0.seats) }) == #""seats" IN (:_batchrun_m0, :_batchrun_m1) _batchrun_m0=100,_batchrun_m1=180"#)
        #expect("BA117".like("ba%") && !"BA117".like("ba_") && "BA117".like("%1_7"))
    }
}
