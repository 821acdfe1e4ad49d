import BatchRunKit
import Foundation

/// A store in a fresh temporary folder with a `Session` entity, made through the public API only.
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

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("batchrun-lib-\(UUID().uuidString)")
        store = try Store(path: folder.appendingPathComponent("app.sqlite").path, model: Self.model)
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
