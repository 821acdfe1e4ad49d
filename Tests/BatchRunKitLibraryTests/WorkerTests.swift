import BatchRunKit
import Foundation
import Synchronization
import Testing
import TestSupport

/// A worker run from library code, through the public API only: two items submitted to a queue
/// folder and to a queue in PostgreSQL, drained by a `Worker` whose `JobFileExecutor` runs them
/// in this process; both end `done`, and their rows are in the store.
@Suite("Worker from library code")
struct WorkerTests {
    @Test("a worker drains a queue of either kind: every item done, every row in its store", arguments: Backend.allCases)
    func drainsAQueue(_ backend: Backend) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("batchrun-worker-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let database = backend == .postgres ? try PostgresServer.database("worker") : nil
        let storeLine = database.map { "store: { postgres: \"\($0)\" }" } ?? "store: \(folder.path)/readings.sqlite"
        try "id,sensor,value\n1,a,1.5\n2,b,2.5\n3,c,3.5\n".write(to: folder.appendingPathComponent("first.csv"), atomically: true, encoding: .utf8)
        try "id,sensor,value\n4,d,4.5\n5,e,5.5\n".write(to: folder.appendingPathComponent("second.csv"), atomically: true, encoding: .utf8)
        for name in ["first", "second"] {
            try """
                version: 1
                \(storeLine)
                entities:
                  Reading:
                    columns:
                      id: integer primary key
                      sensor: text not null
                      value: real
                jobs:
                  load:
                    steps:
                      - insert: { entity: Reading, from: \(folder.path)/\(name).csv }
                """.write(to: folder.appendingPathComponent("\(name).yaml"), atomically: true, encoding: .utf8)
        }

        // The ten lines of docs/library.md's worker.
        let queue = try JobQueue(at: database ?? folder.appendingPathComponent("queue").path)
        try queue.submit(fileAt: folder.appendingPathComponent("first.yaml").path, params: ["batch": "first"])
        try queue.submit(fileAt: folder.appendingPathComponent("second.yaml").path, params: ["batch": "second"])
        let lines = LogLines()
        // A worker's loop blocks its thread: a thread of its own, not one of the tasks' threads
        // (its items' runs need those).
        let status = await withCheckedContinuation { (done: CheckedContinuation<Int32, Never>) in
            Thread.detachNewThread {
                let worker = Worker(queue: queue, options: Worker.Options(slots: 2, once: true, lease: 30),
                                    maxConcurrentJobs: 2, log: { lines.append($0) })
                done.resume(returning: worker.run())
            }
        }

        #expect(status == 0, "\(lines.all)")
        let entries = try queue.list()
        #expect(entries.count == 2)
        #expect(entries.allSatisfy { $0.state == .done }, "\(entries) \(lines.all)")
        let file = try JobFileLoader().load(path: folder.appendingPathComponent("first.yaml").path)
        let store = try Store(file.store, model: file.model)
        let rows = try Context(store: store, name: "check").performAndWait { context in
            try context.fetch(RowRequest(entity: "Reading", select: ["n": "count(*)", "total": "sum(value)"]))
        }
        #expect(rows.first?["n"]?.int == 5)
        #expect(rows.first?["total"]?.double == 17.5)
    }
}

/// A worker's log lines, gathered from its thread.
final class LogLines: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}
