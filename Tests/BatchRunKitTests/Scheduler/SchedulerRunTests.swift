import Foundation
import GRDB
import Synchronization
import Testing
@testable import BatchRunKit

/// The scheduler with real work: limits, timeouts, cancellation midway, readers beside writers.
@Suite("Scheduler at work")
struct SchedulerRunTests {
    final class Gauge: Sendable {
        private let state = Mutex((now: 0, peak: 0))
        func enter() { state.withLock { $0.now += 1; $0.peak = max($0.peak, $0.now) } }
        func leave() { state.withLock { $0.now -= 1 } }
        var now: Int { state.withLock { $0.now } }
        var peak: Int { state.withLock { $0.peak } }
    }

    @Test("never more than maxConcurrent operations run at once, and that many do", arguments: [1, 2, 3])
    func concurrencyLimit(limit: Int) async {
        let gauge = Gauge()
        let operations = (0..<(3 * limit)).map { index in
            BatchOperation<Void>(name: "op\(index)") { _ in
                gauge.enter()
                // Stay until `limit` operations are in at once (or give up after 5 s on a slow machine).
                let deadline = Date().addingTimeInterval(5)
                while gauge.now < limit && Date() < deadline { Thread.sleep(forTimeInterval: 0.001) }
                Thread.sleep(forTimeInterval: 0.005)
                gauge.leave()
            }
        }
        let outcomes = await Scheduler(operations: operations, maxConcurrent: limit).run()
        #expect(outcomes.allSatisfy { $0.status == .ok })
        #expect(gauge.peak == limit)
    }

    @Test("a job past its timeout is cancelled at its next batch boundary and is timed_out; what needs it is skipped")
    func timeout() async {
        let batches = Mutex(0)
        let slow = BatchOperation<Void>(name: "slow") { operation in
            while !operation.isCancelled {
                Thread.sleep(forTimeInterval: 0.01)
                batches.withLock { $0 += 1 }
            }
        }
        let after = BatchOperation<Void>(name: "after", needs: ["slow"]) { _ in }
        let outcomes = await Scheduler(operations: [slow, after], maxConcurrent: 2, timeouts: ["slow": 0.2]).run()
        #expect(outcomes[0].status == .timedOut)
        #expect(outcomes[0].error == "timed out after 0.2s")
        #expect(outcomes[0].runSeconds >= 0.2)
        #expect(outcomes[1].status == .skipped && outcomes[1].skippedBecause == "slow timed_out")
        #expect(batches.withLock { $0 } > 0)
    }

    @Test("cancelAll: the running operation stops, the others end cancelled, every completion block runs on the main actor")
    @MainActor
    func cancelAll() async {
        let started = Mutex(false)
        let running = BatchOperation<Void>(name: "running") { operation in
            started.withLock { $0 = true }
            while !operation.isCancelled { Thread.sleep(forTimeInterval: 0.005) }
        }
        let waiting = BatchOperation<Void>(name: "waiting", needs: ["running"]) { _ in }
        var completed: [String] = []
        for operation in [running, waiting] {
            operation.completionBlock = { outcome in
                MainActor.assertIsolated()
                completed.append("\(outcome.name):\(outcome.status.rawValue)")
            }
        }
        let scheduler = Scheduler(operations: [running, waiting], maxConcurrent: 2)
        let canceller = Task.detached {
            while !started.withLock({ $0 }) { try? await Task.sleep(for: .milliseconds(5)) }
            scheduler.cancelAll()
        }
        let outcomes = await scheduler.run()
        await canceller.value
        #expect(outcomes.map(\.status) == [.cancelled, .cancelled])
        #expect(completed == ["running:cancelled", "waiting:cancelled"])
    }

    @Test("a cancel midway leaves exactly the batches committed before it, and the report counts exactly those")
    func cancelAtBatchBoundary() async throws {
        let test = try TestStore(rows: 0)
        defer { test.cleanUp() }
        let feed = test.folder.appendingPathComponent("feed.csv")
        try ("id,owner,balance\n" + (1...5000).map { "\($0),owner\($0),\($0)" }.joined(separator: "\n") + "\n")
            .write(to: feed, atomically: true, encoding: .utf8)
        let file = try JobFileLoader().load(text: """
            version: 1
            store: s.sqlite
            entities:
              Account:
                columns: { id: integer primary key, owner: text not null unique, balance: integer, status: text not null default 'open' }
            jobs:
              load:
                batch_size: 100
                steps:
                  - insert: { entity: Account, from: feed.csv }
            """, path: test.folder.appendingPathComponent("job.yaml").path)
        let run = JobFileRun(file: file, store: test.store)
        let batches = Mutex(0)
        // Cancel right after the seventh committed batch, before the eighth starts.
        let report = await run.run { event in
            if case .progress = event, batches.withLock({ $0 += 1; return $0 }) == 7 { run.cancel() }
        }
        #expect(report.status == .cancelled)
        let job = report.jobs[0]
        #expect(job.status == .cancelled)
        let stored = try #require(try await test.store.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM Account") })
        #expect(stored == job.rows.inserted)
        #expect(stored == job.batches.committed * 100)
        #expect(stored == 700)
        #expect(job.batches == BatchCounts(committed: 7, rolledBack: 0))
    }

    @Test("a reading job finishes while a writing job holds a long import")
    func readerBesideWriter() async throws {
        let test = try TestStore(rows: 1)
        defer { test.cleanUp() }
        let writing = DispatchSemaphore(value: 0), readerDone = DispatchSemaphore(value: 0)
        let writerSawReaderFinish = Mutex(false)
        let writer = BatchOperation<Void>(name: "writer") { _ in
            // One long write transaction, as a big import batch, open until the reader is done.
            try? test.store.pool.write { db in
                try db.execute(sql: "INSERT INTO Account (id, owner) VALUES (2, 'zed')")
                writing.signal()
                let finished = readerDone.wait(timeout: .now() + 20) == .success
                writerSawReaderFinish.withLock { $0 = finished }
            }
        }
        let reader = BatchOperation<Void>(name: "reader", store: test.store) { _, context in
            _ = writing.wait(timeout: .now() + 20)
            let rows = try context.fetch(FetchRequest(entity: "Account"))
            #expect(rows.count == 1)   // the snapshot before the writer's transaction
            readerDone.signal()
        }
        let outcomes = await Scheduler(operations: [writer, reader], maxConcurrent: 2).run()
        #expect(outcomes.map(\.status) == [.ok, .ok])
        #expect(writerSawReaderFinish.withLock { $0 }, "the reader was blocked by the writer")
    }

    @Test("retries: a batch on a busy store is tried again and succeeds; attempts are reported")
    func retries() async throws {
        let test = try TestStore(rows: 0)
        defer { test.cleanUp() }
        let file = try JobFileLoader().load(text: """
            version: 1
            store: { sqlite: s.sqlite, busy_timeout: 50ms }
            entities:
              Account:
                columns: { id: integer primary key, owner: text not null unique, balance: integer, status: text not null default 'open' }
            jobs:
              add:
                retries: 20
                steps:
                  - insert: { entity: Account, rows: [{ id: 1, owner: ann }] }
            """, path: test.folder.appendingPathComponent("job.yaml").path)
        let store = try Store(path: file.store.path, model: file.model, busyTimeout: file.store.busyTimeout)
        // Another program holds the write lock from before the job starts until well after.
        let queue = try DatabaseQueue(path: file.store.path)
        let locked = DispatchSemaphore(value: 0), retrying = DispatchSemaphore(value: 0)
        let holder = Thread {
            try? queue.writeWithoutTransaction { db in
                try db.execute(sql: "BEGIN IMMEDIATE")
                locked.signal()
                _ = retrying.wait(timeout: .now() + 30)   // until the job met the lock and retries
                try db.execute(sql: "COMMIT")
            }
        }
        holder.start()
        locked.wait()
        let reasons = Mutex<[String]>([])
        let report = await JobFileRun(file: file, store: store).run { event in
            if case .retrying(_, let reason) = event {
                reasons.withLock { $0.append(reason) }
                retrying.signal()
            }
        }
        #expect(reasons.withLock { $0.first } == "another connection held the store's write lock for longer than busy_timeout")
        #expect(report.status == .ok, "\(report.jobs.map { $0.error ?? "" })")
        #expect(report.jobs[0].attempts > 1)
        let count = try await store.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM Account") }
        #expect(count == 1)
    }
}

@Suite("Selecting jobs")
struct JobSelectionTests {
    static let text = """
        version: 1
        store: s.sqlite
        entities:
          T: { columns: { id: integer primary key } }
        jobs:
          a: { steps: [{ fetch: { entity: T, select: { n: "count(*)" }, as: counts } }] }
          b: { needs: a, steps: [{ fetch: { entity: T, where: "id > :n", params: { n: "${counts.n}" } } }] }
          c: { needs: a, steps: [{ fetch: { entity: T } }] }
          d: { needs: [b, c], steps: [{ fetch: { entity: T } }] }
        """

    func names(select: [String] = [], exclude: [String] = []) throws -> [String] {
        let file = try JobFileLoader().load(text: Self.text, path: "/tmp/x.yaml")
        return try JobSelection(select: select, exclude: exclude).apply(to: file).jobs.map(\.name)
    }

    @Test("name, name+ and +name, and exclusions")
    func forms() throws {
        #expect(try names(select: ["c"]) == ["c"])
        #expect(try names(select: ["c+"]) == ["c", "d"])
        #expect(try names(select: ["+d"]) == ["a", "b", "c", "d"])
        #expect(try names(select: ["a+"], exclude: ["c"]) == ["a", "b", "d"])
        #expect(try names(exclude: ["d"]) == ["a", "b", "c"])
    }

    @Test("unknown names and outputs left out are errors")
    func errors() throws {
        #expect(throws: JobFileError.self) { try names(select: ["e"]) }
        do {
            _ = try names(select: ["b"])
            Issue.record("b uses ${counts.n} from a, which is not selected")
        } catch let error as JobFileError {
            #expect(error.diagnostics[0].message.contains("uses ${counts.n} from job a, which the selection leaves out"))
        }
    }
}
