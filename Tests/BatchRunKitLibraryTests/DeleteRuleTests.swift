import BatchRunKit
import Foundation
import TestSupport
import Testing

/// An airline as a typed record, for a record's delete.
struct Airline: Record, Equatable {
    static let entity = "Airline"
    var id: Int
    var name: String?
}

/// Issue 34: delete rules (cascade, nullify, deny) enforced inside the save's transaction, on
/// tables without constraints, on both databases, through the public API only.
@Suite("Delete rules")
struct DeleteRuleTests {
    @Test("an object's delete cascades (recursively) and nullifies; the DidSave names every row; held and merged objects follow", arguments: Backend.allCases)
    @MainActor
    func cascadeAndNullify(_ backend: Backend) async throws {
        let air = try AirlineStore(backend)
        defer { air.cleanUp() }
        try await air.seed()
        let main = MainContext(store: air.store)
        let mainCrew = try main.existingObject(with: ObjectID(entity: "Crew", key: [1]))!
        let mainFlight = try main.existingObject(with: ObjectID(entity: "Flight", key: [11]))
        #expect(mainFlight != nil)
        let saves = air.store.didSaves()

        let context = Context(store: air.store, name: "ops")
        let (result, heldFlightDeleted, heldCrewAirline, heldCrewChanged) = try await context.perform { context in
            let flight = try context.existingObject(with: ObjectID(entity: "Flight", key: [10]))!
            let crew = try context.existingObject(with: ObjectID(entity: "Crew", key: [1]))!
            let airline = try context.existingObject(with: ObjectID(entity: "Airline", key: [1]))!
            context.delete(airline)
            let result = try context.save()
            return (result, flight.isDeleted, try crew["airline_id"], crew.hasChanges)
        }
        #expect(result.deleted == 1)   // the rows the save was asked to delete; the rules' rows are in the DidSave
        let didSave = try #require(result.didSave)
        #expect(Set(didSave.deleted["Airline"] ?? []) == [ObjectID(entity: "Airline", key: [1])])
        #expect(Set(didSave.deleted["Flight"] ?? []) == [ObjectID(entity: "Flight", key: [10]), ObjectID(entity: "Flight", key: [11])])
        #expect(Set(didSave.deleted["Booking"] ?? []) == [ObjectID(entity: "Booking", key: [100]), ObjectID(entity: "Booking", key: [101])])
        #expect(didSave.updated["Crew"] == [ObjectID(entity: "Crew", key: [1])])
        var posted: DidSave?
        for await save in saves where save.savedBy == "ops" { posted = save; break }
        #expect(posted?.sequence == didSave.sequence && posted?.deleted["Booking"]?.count == 2)

        // Held objects of the saving context: the cascaded flight is deleted, the crew member has NULL, unchanged.
        #expect(heldFlightDeleted)
        #expect(heldCrewAirline == .null && !heldCrewChanged)

        #expect(try await air.column("airline_id", of: "Flight") == [12: 2])
        #expect(try await air.column("flight_id", of: "Booking") == [102: 12])
        #expect(try await air.column("airline_id", of: "Crew") == [1: .null, 2: 2])
        #expect(try await air.column("name", of: "Airline") == [2: "Blue"])

        // Another context merges the rules' rows like any save's.
        await main.catchUp()
        #expect(try mainCrew["airline_id"] == .null && !mainCrew.hasChanges)
        #expect(try main.existingObject(with: ObjectID(entity: "Flight", key: [11])) == nil)
    }

    @Test("deny refuses the save with entity, relationship and count, nothing written (the cascade before it undone); the context keeps its changes", arguments: Backend.allCases)
    func deny(_ backend: Backend) async throws {
        let air = try AirlineStore(backend)
        defer { air.cleanUp() }
        try await air.seed()
        let context = Context(store: air.store, name: "ops")
        let refusal = try await context.perform { context -> ContextError? in
            context.delete(try context.existingObject(with: ObjectID(entity: "Airline", key: [2]))!)
            do {
                try context.save()
                return nil
            } catch let error as ContextError {
                let keepsChanges = context.hasChanges
                #expect(keepsChanges)
                return error
            }
        }
        guard case .deleteDenied(let entity, let relationship, let count)? = refusal else {
            Issue.record("expected deleteDenied, got \(String(describing: refusal))")
            return
        }
        #expect(entity == "Airline" && relationship == "Gate.airline" && count == 1)
        #expect(refusal?.description.contains("delete them or point them elsewhere first") == true)
        #expect(try await air.column("name", of: "Airline") == [1: "Aer", 2: "Blue"])
        #expect(try await air.column("airline_id", of: "Flight") == [10: 1, 11: 1, 12: 2])
        #expect(try await air.column("flight_id", of: "Booking") == [100: 10, 101: 11, 102: 12])
        #expect(try await air.column("airline_id", of: "Crew") == [1: 1, 2: 2])

        // Deleting the gate in the same save lets the airline go.
        let result = try await context.perform { context in
            context.delete(try context.existingObject(with: ObjectID(entity: "Gate", key: ["A1"]))!)
            return try context.save()
        }
        #expect(result.deleted == 2)
        #expect(try await air.column("name", of: "Airline") == [1: "Aer"])
        #expect(try await air.column("airline_id", of: "Flight") == [10: 1, 11: 1])
        #expect(try await air.column("airline_id", of: "Crew") == [1: 1, 2: .null])
    }

    @Test("a record's delete and a batch delete request follow the rules; a hot swap cascades only for keys it does not bring back", arguments: Backend.allCases)
    func recordsBatchesAndHotSwaps(_ backend: Backend) async throws {
        let air = try AirlineStore(backend)
        defer { air.cleanUp() }
        try await air.seed()
        let context = Context(store: air.store, name: "ops")
        try await context.perform { context in
            try context.delete(Airline(id: 1, name: "Aer"))
            try context.save()
        }
        #expect(try await air.column("airline_id", of: "Flight") == [12: 2])
        #expect(try await air.column("airline_id", of: "Crew") == [1: .null, 2: 2])

        // A batch delete request: refused by the gate (deny), then allowed once the gate goes.
        await #expect(throws: ContextError.self) {
            try await context.perform { try $0.execute(BatchDeleteRequest(entity: "Airline", where: "id = 2")) }
        }
        #expect(try await air.column("airline_id", of: "Flight") == [12: 2])
        let gone = try await context.perform { context in
            _ = try context.execute(BatchDeleteRequest(entity: "Gate", where: nil))
            return try context.execute(BatchDeleteRequest(entity: "Airline", where: "id = 2"))
        }
        #expect(gone.rows.deleted == 1)
        #expect(try await air.column("airline_id", of: "Flight") == [:])
        #expect(try await air.column("flight_id", of: "Booking") == [:])

        // A hot swap of the airlines: a key it brings back keeps its flights, one it drops cascades.
        try await context.perform { context in
            for (id, airline) in [(20, 3), (21, 4)] {
                try context.insert(into: "Flight", values: ["id": StoreValue(id), "airline_id": StoreValue(airline)])
            }
            try context.insert(into: "Airline", values: ["id": 3, "name": "Cirrus"])
            try context.insert(into: "Airline", values: ["id": 4, "name": "Delta"])
            try context.save()
            _ = try context.execute(BatchInsertRequest(entity: "Airline", rows: [["id": 3, "name": "Cirrus 2"]], replacingAll: true))
        }
        #expect(try await air.column("name", of: "Airline") == [3: "Cirrus 2"])
        #expect(try await air.column("airline_id", of: "Flight") == [20: 3])
    }

    @Test("a model whose relationship names what it lacks is refused as the store opens, each problem said")
    func modelProblems() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("batchrun-rel-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = Model(entities: [
            Entity(name: "Airline", columns: [Column(name: "code", type: .text, isPrimaryKey: true)], primaryKey: ["code"]),
            Entity(name: "Flight", columns: [
                Column(name: "id", type: .integer, isPrimaryKey: true),
                Column(name: "airline_id", type: .integer, notNull: true),
            ], primaryKey: ["id"], relationships: [
                Relationship(name: "airline", destination: "Airline", column: "airline_id", deleteRule: .nullify),
                Relationship(name: "carrier", destination: "Carrier", column: "airline_id"),
                Relationship(name: "operator", destination: "Airline", column: "operator_id"),
            ]),
        ])
        #expect {
            try Store(path: folder.appendingPathComponent("bad.sqlite").path, model: model)
        } throws: { error in
            let text = "\(error)"
            return text.contains("column airline_id is integer but Airline.code is text")
                && text.contains("nullifies column airline_id, which is not null")
                && text.contains("names entity Carrier, which the model lacks")
                && text.contains("names column operator_id, which Flight lacks")
        }
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("bad.sqlite").path))
    }

    @Test("deny counts the referencing rows left once every cascade ran (SQL's NO ACTION), whichever entity's rules run first; a key column cannot be nullified", arguments: Backend.allCases)
    func denyAfterCascades(_ backend: Backend) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("batchrun-rel-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        // A gate refers to its terminal (cascade) and to its airline (deny): deleting both the
        // airline and the terminal in one save takes the gates with the terminal, so nothing refers
        // to the airline any more.
        func model(gateKeyRule: DeleteRule = .cascade) -> Model {
            Model(entities: [
                Entity(name: "Airline", columns: [Column(name: "id", type: .integer, isPrimaryKey: true)], primaryKey: ["id"]),
                Entity(name: "Terminal", columns: [Column(name: "id", type: .integer, isPrimaryKey: true)], primaryKey: ["id"]),
                Entity(name: "Gate", columns: [
                    Column(name: "id", type: .integer, isPrimaryKey: true),
                    Column(name: "Terminal_ID", type: .integer),
                    Column(name: "airline_id", type: .integer),
                ], primaryKey: ["id"], relationships: [
                    Relationship(name: "airline", destination: "Airline", column: "airline_id", deleteRule: .deny),
                    // Spelled in another case than the column: the rules' SQL names the column as declared.
                    Relationship(name: "terminal", destination: "Terminal", column: "terminal_id", deleteRule: .cascade),
                    Relationship(name: "number", destination: "Airline", column: "id", deleteRule: gateKeyRule),
                ]),
            ])
        }
        #expect {
            try Store(path: folder.appendingPathComponent("bad.sqlite").path, model: model(gateKeyRule: .nullify))
        } throws: { error in "\(error)".contains("nullifies column id, which is part of the primary key; use cascade or deny") }

        let store = switch backend {
        case .sqlite: try Store(path: folder.appendingPathComponent("gates.sqlite").path, model: model())
        case .postgres: try Store(postgres: PostgresServer.database("gates"), model: model())
        }
        let context = Context(store: store, name: "ops")
        try await context.perform { context in
            try context.insert(into: "Airline", values: ["id": 1])
            try context.insert(into: "Airline", values: ["id": 7])
            try context.insert(into: "Terminal", values: ["id": 5])
            for id in [1, 2] { try context.insert(into: "Gate", values: ["id": StoreValue(id), "Terminal_ID": 5, "airline_id": 7]) }
            try context.save()
            context.delete(try context.existingObject(with: ObjectID(entity: "Airline", key: [7]))!)
            context.delete(try context.existingObject(with: ObjectID(entity: "Terminal", key: [5]))!)
            let result = try context.save()
            #expect(Set(result.didSave?.deleted["Gate"] ?? []) == [ObjectID(entity: "Gate", key: [1]), ObjectID(entity: "Gate", key: [2])])
            #expect(try context.fetch(FetchRequest(entity: "Gate")).isEmpty)
        }
    }

    @Test("an insert of the same save that a cascade deletes is not left registered as saved", arguments: Backend.allCases)
    func insertCascadedInSameSave(_ backend: Backend) async throws {
        let air = try AirlineStore(backend)
        defer { air.cleanUp() }
        try await air.seed()
        let (deleted, registered) = try await Context(store: air.store, name: "ops").perform { context in
            let flight = try context.insert(into: "Flight", values: ["id": 13, "number": "F13", "airline_id": 1])
            context.delete(try context.existingObject(with: ObjectID(entity: "Airline", key: [1]))!)
            try context.save()
            return (flight.isDeleted, context.registeredObjects.contains { $0 === flight })
        }
        #expect(deleted && !registered)
        #expect(try await air.column("airline_id", of: "Flight") == [12: 2])
    }
}
