import Foundation
import Synchronization
import Testing
import BatchRunKit
import TestSupport

/// The README's "Using batchrun from Swift" example, run as written (only the store's path and
/// the printing differ), so the README cannot drift from the library; on PostgreSQL only the
/// `Store` line differs (`Store(postgres:model:)`, docs/postgresql.md).
@Suite("README example")
@MainActor
struct ReadmeExampleTests {
    @Test("a custom operation with its own private context, a per-save block and a completion block",
          arguments: TestBackend.allCases)
    func customOperation(backend: TestBackend) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("batchrun-readme-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let saves = Mutex(0)
        var finished: [String] = []

        // --- README example starts here ---
        let model = Model(entities: [
            Entity(name: "Session", columns: [
                Column(name: "id", type: .integer, isPrimaryKey: true),
                Column(name: "user", type: .text, notNull: true),
                Column(name: "status", type: .text, notNull: true, defaultLiteral: "'open'"),
            ], primaryKey: ["id"]),
        ])
        let store = try backend == .sqlite
            ? Store(path: folder.appendingPathComponent("app.sqlite").path, model: model)
            : Store(postgres: PostgresServer.database("readme"), model: model)
        let main = MainContext(store: store)          // merges every save by itself

        let seed = BatchOperation(name: "seed", store: store) { operation, context in
            for id in 1...2_500 {
                try context.insert(into: "Session", values: ["id": StoreValue(id), "user": "user\(id % 7)"])
            }
            try context.save()
        }

        let closeStale = BatchOperation(name: "close_stale", needs: ["seed"], store: store,
                                        mergePolicy: .objectTrump) { operation, context -> Int in
            var request = FetchRequest(entity: "Session", where: "status = 'open'", limit: 1_000)
            var closed = 0
            while !operation.isCancelled {
                let batch = try context.fetch(request)
                guard let last = batch.last else { break }
                for session in batch { try session.set("status", to: "stale") }
                closed += try context.saveAndReset().updated   // one batch, checked against what was read
                request.after = last.objectID
            }
            return closed
        }
        closeStale.didSaveBlock = { result in saves.withLock { $0 += 1 } }
        closeStale.completionBlock = { result in       // on the main actor, also when cancelled
            finished.append("\(result.name) \(result.status.rawValue) \(result.value ?? 0)")
        }

        let scheduler = Scheduler(operations: [seed, closeStale], maxConcurrent: 2, mainContext: main)
        let outcomes = await scheduler.run()          // returns with the main context caught up
        let stale = try main.count(FetchRequest(entity: "Session", where: "status = 'stale'"))
        // --- README example ends here ---

        #expect(outcomes.map(\.status) == [.ok, .ok])
        #expect(stale == 2_500)
        #expect(saves.withLock { $0 } == 3)
        #expect(finished == ["close_stale ok 2500"])
    }
}
