import BatchRunKit
import Foundation
import Testing

/// Issue 34: related objects read when first asked for (faulting), and relationship changes
/// conflicting like properties, on both databases, through the public API only.
@Suite("Related objects")
struct RelatedObjectTests {
    @Test("a to-one gives the referred object (the registered instance), a to-many its referrers as this context sees them", arguments: Backend.allCases)
    func faulting(_ backend: Backend) async throws {
        let air = try AirlineStore(backend)
        defer { air.cleanUp() }
        try await air.seed()
        try await Context(store: air.store, name: "ui").perform { context in
            let airline = try context.existingObject(with: ObjectID(entity: "Airline", key: [1]))!
            let flight = try context.existingObject(with: ObjectID(entity: "Flight", key: [10]))!
            #expect(try context.relatedObject("airline", of: flight) === airline)
            let booking = try context.existingObject(with: ObjectID(entity: "Booking", key: [102]))!
            #expect(try context.relatedObject("flight", of: booking)?["number"] == "F12")
            #expect(try context.relatedObjects("flights", of: airline).map { try $0["id"] } == [10, 11])
            #expect(try context.relatedObjects("bookings", of: flight).map { try $0["id"] } == [100])
            #expect(try context.relatedObjects("gates", of: airline).isEmpty)

            // Unsaved changes count: flight 12 pointed at airline 1, flight 11 deleted, flight 13 inserted.
            let twelve = try context.existingObject(with: ObjectID(entity: "Flight", key: [12]))!
            try twelve.set("airline_id", to: 1)
            context.delete(try context.existingObject(with: ObjectID(entity: "Flight", key: [11]))!)
            try context.insert(into: "Flight", values: ["id": 13, "number": "F13", "airline_id": 1])
            #expect(try context.relatedObjects("flights", of: airline).map { try $0["id"] }.sorted { $0.int! < $1.int! } == [10, 12, 13])
            // An unsaved insert deleted again is no longer related.
            let fourteen = try context.insert(into: "Flight", values: ["id": 14, "number": "F14", "airline_id": 1])
            context.delete(fourteen)
            #expect(try context.relatedObjects("flights", of: airline).map { try $0["id"] }.sorted { $0.int! < $1.int! } == [10, 12, 13])
            let blue = try context.relatedObject("airline", of: try context.existingObject(with: ObjectID(entity: "Gate", key: ["A1"]))!)!
            #expect(try context.relatedObjects("flights", of: blue).isEmpty)
            #expect(try context.relatedObject("airline", of: twelve) === airline)

            try twelve.set("airline_id", to: nil)
            #expect(try context.relatedObject("airline", of: twelve) == nil)
            #expect { try context.relatedObject("carrier", of: flight) } throws: { error in
                guard case ContextError.unknownRelationship("Flight", "carrier") = error else { return false }
                return true
            }
            #expect { try context.relatedObjects("flight", of: airline) } throws: { error in
                guard case ContextError.unknownRelationship("Airline", "flight") = error else { return false }
                return true
            }
        }
    }

    @Test("the main context reads related objects on the main actor", arguments: Backend.allCases)
    @MainActor
    func mainContext(_ backend: Backend) async throws {
        let air = try AirlineStore(backend)
        defer { air.cleanUp() }
        try await air.seed()
        let main = MainContext(store: air.store)
        let crew = try main.existingObject(with: ObjectID(entity: "Crew", key: [2]))!
        let airline = try #require(try main.relatedObject("airline", of: crew))
        #expect(try airline["name"] == "Blue")
        #expect(try main.relatedObjects("crew", of: airline).map { try $0["id"] } == [2])
    }

    @Test("a relationship change conflicting with another context's save is reported like a property's", arguments: Backend.allCases)
    func conflicts(_ backend: Backend) async throws {
        let air = try AirlineStore(backend)
        defer { air.cleanUp() }
        try await air.seed()
        let ours = Context(store: air.store, name: "ours")
        let flight10 = ObjectID(entity: "Flight", key: [10]), flight11 = ObjectID(entity: "Flight", key: [11])
        try await ours.perform { context in
            try context.existingObject(with: flight10)!.set("airline_id", to: 2)
            _ = try context.existingObject(with: flight11)!.set("number", to: "F11b")
        }
        try await Context(store: air.store, name: "theirs").perform { context in
            try context.existingObject(with: flight10)!.set("airline_id", to: nil)
            try context.save()
        }
        let conflict = try await ours.perform { context -> MergeConflict? in
            do { try context.save() } catch let error as MergeConflictError { return error.conflict }
            return nil
        }
        #expect(conflict?.objectID == flight10 && conflict?.kind == .optimistic && conflict?.changedBy == "theirs")
        #expect(conflict?.properties.map(\.name) == ["airline_id"])
        #expect(conflict?.properties.first?.store == .null && conflict?.properties.first?.ours == 2)

        // Rows a cascade deleted conflict with an unsaved change to them, as any deleted row does.
        try await Context(store: air.store, name: "cleanup").perform { context in
            context.delete(try context.existingObject(with: ObjectID(entity: "Airline", key: [1]))!)
            try context.save()
        }
        await ours.perform { $0.mergePolicy = .storeTrump }
        let result = try await ours.perform { try $0.save() }
        let deleted = result.conflicts.first { $0.objectID == flight11 }
        #expect(deleted?.kind == .deleted && deleted?.changedBy == "cleanup")
        // Flight 10: store-trump keeps the store's NULL over our airline 2 (it was nulled before the cascade ran).
        #expect(result.conflicts.first { $0.objectID == flight10 }?.outcome == .keptStore)
        #expect(try await air.column("airline_id", of: "Flight") == [10: .null, 12: 2])
    }

    @Test("docs/library.md's Relationships example, as written: flights pointed elsewhere in the save are not cascaded")
    func libraryDocExample() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("batchrun-rel-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        // From docs/library.md, "Relationships":
        let model = Model(entities: [
            Entity(name: "Airline", columns: [Column(name: "id", type: .integer, isPrimaryKey: true),
                                              Column(name: "name", type: .text)], primaryKey: ["id"]),
            Entity(name: "Flight", columns: [
                Column(name: "id", type: .integer, isPrimaryKey: true),
                Column(name: "airline_id", type: .integer),
            ], primaryKey: ["id"], indexes: [["airline_id"]], relationships: [
                Relationship(name: "airline", destination: "Airline", column: "airline_id", inverse: "flights", deleteRule: .cascade),
            ]),
        ])
        let store = try Store(path: folder.appendingPathComponent("var/air.sqlite").path, model: model)   // the docs: "var/air.sqlite"
        try await Context(store: store, name: "seed").perform { context in
            for id in 1...2 { try context.insert(into: "Airline", values: ["id": StoreValue(id)]) }
            for id in 10...11 { try context.insert(into: "Flight", values: ["id": StoreValue(id), "airline_id": 1]) }
            try context.save()
        }
        try await Context(store: store, name: "ops").perform { context in
            let flight = try context.existingObject(with: ObjectID(entity: "Flight", key: [10]))!
            let airline = try context.relatedObject("airline", of: flight)!           // read when asked for (a fault)
            for other in try context.relatedObjects("flights", of: airline) {           // one statement
                try other.set("airline_id", to: 2)                                       // a relationship change is a column change
            }
            context.delete(airline)
            try context.save()          // the airline, and (cascade) its flights still pointing at it, in one transaction
        }
        let rows = try await Context(store: store, name: "check").perform { context in
            try context.fetch(FetchRequest(entity: "Flight")).map { [try $0["id"], try $0["airline_id"]] }
        }
        #expect(rows == [[10, 2], [11, 2]])
        #expect(try await Context(store: store, name: "check").perform { try $0.count(FetchRequest(entity: "Airline")) } == 1)
    }
}
