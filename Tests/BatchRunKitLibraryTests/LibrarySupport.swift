import BatchRunKit
import Foundation
import TestSupport

/// The databases the library tests run on: the same assertions on each.
enum Backend: String, CaseIterable, Sendable, CustomStringConvertible {
    case sqlite, postgres

    var description: String { rawValue }
}

/// A store with a `Session` entity, made through the public API only: in a fresh temporary
/// folder (SQLite), or in a fresh database on the test process's PostgreSQL server.
struct SessionStore {
    static let model = Model(entities: [
        Entity(name: "Session", columns: [
            Column(name: "id", type: .integer, isPrimaryKey: true),
            Column(name: "user", type: .text, notNull: true),
            Column(name: "minutes", type: .real),
            Column(name: "started_at", type: .datetime),
            Column(name: "status", type: .text, notNull: true, defaultLiteral: "'open'"),
        ], primaryKey: ["id"]),
    ])

    let folder: URL
    let store: Store

    init(_ backend: Backend) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("batchrun-lib-\(UUID().uuidString)")
        switch backend {
        case .sqlite: store = try Store(path: folder.appendingPathComponent("app.sqlite").path, model: Self.model)
        case .postgres: store = try Store(postgres: PostgresServer.database("lib"), model: Self.model)
        }
    }

    /// Inserts `count` sessions with ids 1...count through a private context.
    func seed(_ count: Int, minutes: Double = 10) async throws {
        let context = Context(store: store, name: "seed")
        try await context.perform { context in
            for id in 1...count {
                try context.insert(into: "Session", values: ["id": StoreValue(id), "user": "user\(id % 3)",
                                                             "minutes": .real(minutes)])
            }
            try context.save()
        }
    }

    func cleanUp() {
        try? FileManager.default.removeItem(at: folder)
    }
}
