import Foundation
import GRDB
import Testing
@testable import BatchRunKit

/// Jobs writing the same rows at the same time, through the real job-file runner.
@Suite("Concurrent writers")
struct ConcurrencyTests {
    func load(_ yaml: String, store: String) throws -> JobFile {
        try JobFileLoader().load(text: yaml, path: URL(fileURLWithPath: store).deletingLastPathComponent().appendingPathComponent("job.yaml").path)
    }

    @Test("recompute loses no increment: two jobs and an outside writer add to the same rows")
    func noLostUpdates() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("batchrun-lost-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let rows = 300, rounds = 3
        var jobs = ""
        for name in ["a", "b"] {
            jobs += "  \(name):\n    merge_policy: recompute\n    batch_size: 7\n    steps:\n"
            for _ in 0..<rounds {
                jobs += "      - batch-update: { entity: Counter, set: { n: \"n + 1\", \(name): \"\(name) + 1\" } }\n"
            }
        }
        let file = try load("""
            version: 1
            store: s.sqlite
            entities:
              Counter:
                columns: { id: integer primary key, n: integer not null, a: integer not null, b: integer not null }
            jobs:
            \(jobs)
            """, store: folder.appendingPathComponent("s.sqlite").path)
        let store = try Store(path: file.store.path, model: file.model)
        try await store.pool.write { db in
            for id in 1...rows { try db.execute(sql: "INSERT INTO Counter VALUES (?, 0, 0, 0)", arguments: [id]) }
        }
        // The outside writer: another connection incrementing every row, many times, meanwhile.
        let outsideRounds = 20
        let outside = Task.detached {
            var configuration = Configuration()
            configuration.busyMode = .timeout(10)
            let queue = try DatabaseQueue(path: file.store.path, configuration: configuration)
            for _ in 0..<outsideRounds {
                try await queue.write { db in try db.execute(sql: "UPDATE Counter SET n = n + 1") }
                try await Task.sleep(for: .milliseconds(2))
            }
        }
        let report = await JobFileRun(file: file, store: store, maxConcurrent: 2).run()
        try await outside.value
        #expect(report.status == .ok, "\(report.jobs.map { "\($0.name): \($0.error ?? "")" })")
        let totals = try store.pool.read { db in
            try Row.fetchOne(db, sql: "SELECT sum(n) AS n, sum(a) AS a, sum(b) AS b, min(n) AS low, max(n) AS high FROM Counter")!
        }
        #expect(totals["a"] as Int == rows * rounds)
        #expect(totals["b"] as Int == rows * rounds)
        #expect(totals["n"] as Int == rows * (2 * rounds + outsideRounds))
        #expect(totals["low"] as Int == 2 * rounds + outsideRounds && totals["high"] as Int == 2 * rounds + outsideRounds)
    }

    @Test("two jobs changing different properties of the same rows: both changes survive on every row")
    func differentProperties() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("batchrun-props-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = try load("""
            version: 1
            store: s.sqlite
            entities:
              Item:
                columns: { id: integer primary key, colour: text not null, size: integer not null }
            jobs:
              paint:
                merge_policy: object-trump
                batch_size: 3
                steps:
                  - batch-update: { entity: Item, set: { colour: "'red'" } }
                  - batch-update: { entity: Item, set: { colour: "colour || '!'" } }
              grow:
                merge_policy: store-trump
                batch_size: 5
                steps:
                  - batch-update: { entity: Item, set: { size: "size * 2" } }
                  - batch-update: { entity: Item, set: { size: "size + 1" } }
            """, store: folder.appendingPathComponent("s.sqlite").path)
        let store = try Store(path: file.store.path, model: file.model)
        let rows = 400
        try await store.pool.write { db in
            for id in 1...rows { try db.execute(sql: "INSERT INTO Item VALUES (?, 'grey', 1)", arguments: [id]) }
        }
        let report = await JobFileRun(file: file, store: store, maxConcurrent: 2).run()
        #expect(report.status == .ok)
        let wrong = try await store.pool.read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM Item WHERE colour <> 'red!' OR size <> 3")
        }
        #expect(wrong == 0)
        // Any conflict met was merged, never dropped.
        #expect(report.conflicts.allSatisfy { $0.outcome == .merged || $0.outcome == .keptOurs })
    }

    @Test("a context merges another's save; a main context merges every save by itself")
    @MainActor
    func merging() async throws {
        let test = try TestStore(rows: 3)
        defer { test.cleanUp() }
        let main = MainContext(store: test.store)
        let seen = try await main.fetch(FetchRequest(entity: "Account"))
        #expect(try seen.map { try $0["balance"] } == [.integer(10), .integer(10), .integer(10)])

        let holder = Context(store: test.store, name: "holder")
        try await holder.perform { context in
            context.retainsRegisteredObjects = true   // its objects are looked at again below
            let objects = try context.fetch(FetchRequest(entity: "Account"))
            try objects[0].set("status", to: .text("mine"))     // a pending change on row 1 only
        }
        let writer = Context(store: test.store, name: "writer")
        let saved = try await writer.perform { context in
            for object in try context.fetch(FetchRequest(entity: "Account")) { try object.set("balance", to: .integer(20)) }
            context.delete(try #require(try context.existingObject(with: ObjectID(entity: "Account", key: [.integer(3)]))))
            return try context.save()
        }
        let didSave = try #require(saved.didSave)
        #expect(didSave.savedBy == "writer")
        #expect(didSave.updated["Account"]?.count == 2 && didSave.deleted["Account"] == [ObjectID(entity: "Account", key: [.integer(3)])])

        let balances = try await holder.perform { context -> [StoreValue] in
            try context.merge(didSave)
            return try context.registeredObjects.sorted { $0.values[0].description < $1.values[0].description }.map { try $0["balance"] }
        }
        // Row 1 has a pending change: it keeps the value it read; row 2 is refreshed; row 3 is gone.
        #expect(balances == [.integer(10), .integer(20)])

        await main.catchUp()
        #expect(main.mergedSequence >= didSave.sequence)
        let merged = main.registeredObjects.sorted { $0.values[0].description < $1.values[0].description }
        #expect(try merged.map { try $0["balance"] } == [.integer(20), .integer(20)])
    }

    @Test("rollback discards changes, reset forgets objects, atomically rolls back on a throw")
    func rollbackResetAtomic() async throws {
        let test = try TestStore(rows: 2)
        defer { test.cleanUp() }
        let context = Context(store: test.store, name: "job")
        let afterRollback = try await context.perform { context -> (Bool, StoreValue) in
            let objects = try context.fetch(FetchRequest(entity: "Account"))
            try objects[0].set("balance", to: .integer(1))
            try context.insert(into: "Account", values: ["id": .integer(9), "owner": .text("zed")])
            context.rollback()
            return (context.hasChanges, try objects[0]["balance"])
        }
        #expect(afterRollback == (false, .integer(10)))
        await context.perform { $0.reset() }
        #expect(await context.perform { $0.registeredObjects.count } == 0)

        struct Stop: Error {}
        await #expect(throws: Stop.self) {
            try await context.perform { context in
                try context.atomically { context in
                    for object in try context.fetch(FetchRequest(entity: "Account")) { context.delete(object) }
                    try context.save()
                    #expect(try context.fetch(FetchRequest(entity: "Account")).isEmpty)   // sees its own save
                    throw Stop()
                }
            }
        }
        #expect(try test.row(1) != nil && test.row(2) != nil)
    }
}
