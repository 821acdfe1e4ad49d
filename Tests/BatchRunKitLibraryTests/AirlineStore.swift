import BatchRunKit
import Foundation
import TestSupport

/// A store of airlines and what refers to them, through the public API only: a flight refers
/// to its airline (cascade), a booking to its flight (cascade), a crew member to an airline
/// (nullify), a gate to an airline (deny).
struct AirlineStore {
    static let model = Model(entities: [
        Entity(name: "Airline", columns: [
            Column(name: "id", type: .integer, isPrimaryKey: true),
            Column(name: "name", type: .text),
        ], primaryKey: ["id"]),
        Entity(name: "Flight", columns: [
            Column(name: "id", type: .integer, isPrimaryKey: true),
            Column(name: "number", type: .text),
            Column(name: "airline_id", type: .integer),
        ], primaryKey: ["id"], indexes: [["airline_id"]], relationships: [
            Relationship(name: "airline", destination: "Airline", column: "airline_id", inverse: "flights", deleteRule: .cascade),
        ]),
        Entity(name: "Booking", columns: [
            Column(name: "id", type: .integer, isPrimaryKey: true),
            Column(name: "passenger", type: .text),
            Column(name: "flight_id", type: .integer, notNull: true),
        ], primaryKey: ["id"], relationships: [
            Relationship(name: "flight", destination: "Flight", column: "flight_id", inverse: "bookings", deleteRule: .cascade),
        ]),
        Entity(name: "Crew", columns: [
            Column(name: "id", type: .integer, isPrimaryKey: true),
            Column(name: "name", type: .text),
            Column(name: "airline_id", type: .integer),
        ], primaryKey: ["id"], relationships: [
            Relationship(name: "airline", destination: "Airline", column: "airline_id", inverse: "crew", deleteRule: .nullify),
        ]),
        Entity(name: "Gate", columns: [
            Column(name: "id", type: .text, isPrimaryKey: true),
            Column(name: "airline_id", type: .integer),
        ], primaryKey: ["id"], relationships: [
            Relationship(name: "airline", destination: "Airline", column: "airline_id", inverse: "gates"),   // deny, the default
        ]),
    ])

    let folder: URL
    let store: Store

    init(_ backend: Backend) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("batchrun-rel-\(UUID().uuidString)")
        switch backend {
        case .sqlite: store = try Store(path: folder.appendingPathComponent("air.sqlite").path, model: Self.model)
        case .postgres: store = try Store(postgres: PostgresServer.database("rel"), model: Self.model)
        }
    }

    /// Airlines 1 and 2; flights 10 and 11 of airline 1, 12 of airline 2; bookings 100 (flight
    /// 10), 101 (flight 11), 102 (flight 12); crew 1 of airline 1, 2 of airline 2; gate A1 of
    /// airline 2.
    func seed() async throws {
        try await Context(store: store, name: "seed").perform { context in
            for (id, name) in [(1, "Aer"), (2, "Blue")] { try context.insert(into: "Airline", values: ["id": StoreValue(id), "name": StoreValue(name)]) }
            for (id, airline) in [(10, 1), (11, 1), (12, 2)] {
                try context.insert(into: "Flight", values: ["id": StoreValue(id), "number": "F\(id)", "airline_id": StoreValue(airline)])
            }
            for (id, flight) in [(100, 10), (101, 11), (102, 12)] {
                try context.insert(into: "Booking", values: ["id": StoreValue(id), "passenger": "P\(id)", "flight_id": StoreValue(flight)])
            }
            for (id, airline) in [(1, 1), (2, 2)] {
                try context.insert(into: "Crew", values: ["id": StoreValue(id), "name": "C\(id)", "airline_id": StoreValue(airline)])
            }
            try context.insert(into: "Gate", values: ["id": "A1", "airline_id": 2])
            try context.save()
        }
    }

    /// Every row of `entity` as `[key: column value]`, read through a fresh context.
    func column(_ column: String, of entity: String) async throws -> [Int: StoreValue] {
        try await Context(store: store, name: "check").perform { context in
            var rows: [Int: StoreValue] = [:]
            for object in try context.fetch(FetchRequest(entity: entity)) { rows[try object["id"].int!] = try object[column] }
            return rows
        }
    }

    func cleanUp() {
        try? FileManager.default.removeItem(at: folder)
    }
}
