import BatchRunKit
import Foundation
import Testing
import TestSupport

/// A running item's progress (what `batchrun serve` shows) belongs to the claim whose run wrote
/// it: a run killed with its worker (SIGKILL) leaves progress behind, and the item taken over,
/// or finished, must show none of it.
@Suite("Stale progress after a kill")
struct StaleProgressTests {
    static let stale = #"{"pid":999999,"host":"gone","jobs":["load"],"rows":5,"started_at":"2026-11-26T14:03:07Z"}"#

    @Test("folder: taking over an orphan removes its dead run's progress file; finishing removes one a killed run left")
    func folder() throws {
        let folder = try TemporaryFolder()
        try FileManager.default.createDirectory(atPath: folder.path("q/pending"), withIntermediateDirectories: true)
        let queue = try QueueFolder(path: folder.path("q"))
        _ = try queue.submit(text: "version: 1\n", name: "a.yaml", params: [:])
        let first = try #require(try queue.claimNext())
        try Self.stale.write(toFile: first.path + ".progress", atomically: true, encoding: .utf8)
        first.release()   // its worker and run were killed: the lock went with them

        let taken = try #require(try queue.claimNext())
        #expect(taken.orphan && taken.name == first.name)
        #expect(!FileManager.default.fileExists(atPath: taken.path + ".progress"), "the dead run's progress is gone once taken over")

        // This claim's run is killed too (its progress stays), and its worker ends the item.
        try Self.stale.write(toFile: taken.path + ".progress", atomically: true, encoding: .utf8)
        try queue.finish(taken, as: .failed)
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.path("q/running"))
        #expect(left.filter { $0.hasSuffix(".progress") }.isEmpty, "\(left)")
    }

    @Test("PostgreSQL: progress is written only under the claim's token and lease, and cleared by a takeover and by the end")
    func postgresFencing() throws {
        let url = try PostgresServer.database("stale_fence")
        let queue = try PostgresQueue(url: url)
        _ = try queue.submit(text: "version: 1\n", name: "a.yaml", params: [:], directory: "/tmp")
        let first = try #require(try queue.claimNext(worker: "1@a", lease: 0.5))
        #expect(try queue.publishProgress(Self.stale, item: first.id, token: first.token))
        #expect(try queue.items().first?.progress == Self.stale)
        Thread.sleep(forTimeInterval: 1)   // the lease runs out
        #expect(try !queue.publishProgress(Self.stale, item: first.id, token: first.token), "no lease, no progress")
        #expect(try queue.items().first?.progress == Self.stale, "an orphan shows its last progress until taken over")

        let taken = try #require(try queue.claimNext(worker: "2@b", lease: 30))
        #expect(taken.takenOver && taken.id == first.id)
        #expect(try queue.items().first?.progress == nil, "the takeover cleared the dead run's progress")
        #expect(try !queue.publishProgress(Self.stale, item: first.id, token: first.token), "the old claim's run writes nothing")
        #expect(try queue.publishProgress("{}", item: taken.id, token: taken.token))
        #expect(try queue.finish(taken, as: .done, status: 0, report: nil, log: "", error: nil))
        #expect(try PostgresServer.psql(url, "SELECT progress IS NULL FROM _batchrun_queue") == "t", "the end cleared it")
    }

    @Test("PostgreSQL end to end: a worker killed with its run (SIGKILL); the worker that takes the item over never shows the dead run's progress, and the done item has none")
    func postgresKilledWorker() throws {
        let url = try PostgresServer.database("stale_kill")
        let folder = try TemporaryFolder()
        try Batchrun.writeLongFeed(in: folder)
        // 100 rows a batch, 4,000 batches: long enough to publish its progress and be killed in
        // the middle, short enough to finish after. (The slow item's batches are of 10 rows:
        // 40,000 of them took the run past the test's 300 s beside two CPU-bound processes; at
        // 1,000 rows it ended before it published its progress.)
        let item = LivePageTests.slowItem(in: folder).replacingOccurrences(of: "batch_size: 10\n", with: "batch_size: 100\n")
        try #require(item.contains("batch_size: 100\n"))
        try folder.write("slow.yaml", item)
        #expect(try Batchrun.run(["submit", url, "slow.yaml"], in: folder.url).status == 0)
        let first = try PostgresQueueTests.startWorker(folder, url: url)
        defer { if first.isRunning { kill(first.processIdentifier, SIGKILL) } }
        let deadline = Date().addingTimeInterval(120)
        var dead = ""
        while Date() < deadline, dead.isEmpty {
            dead = try PostgresServer.psql(url, "SELECT coalesce(progress::json->>'pid', '') FROM _batchrun_queue")
            Thread.sleep(forTimeInterval: 0.1)
        }
        try #require(!dead.isEmpty, "the run published its progress")
        // From any of the worker's threads: a run started from another thread than the main one is
        // not in the main thread's list, and left running it held the item past the test's wait.
        let runs = QueueTests.children(of: first.processIdentifier)
        kill(first.processIdentifier, SIGKILL)
        for run in runs { kill(run, SIGKILL) }
        first.waitUntilExit()

        let second = try PostgresQueueTests.startWorker(folder, url: url)
        defer { if second.isRunning { kill(second.processIdentifier, SIGKILL) } }
        var seenTakenOver = false
        let end = Date().addingTimeInterval(300)
        while Date() < end {
            let row = try PostgresServer.psql(url, """
                SELECT state || '|' || coalesce(worker, '') || '|' || coalesce(progress::json->>'pid', '') FROM _batchrun_queue
                """).split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            if row[0] == "done" { break }
            if row[1].hasPrefix("\(second.processIdentifier)@") {
                seenTakenOver = true
                #expect(row[2] != dead, "the item taken over shows the dead run's progress")
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
        #expect(seenTakenOver)
        let ended = try PostgresServer.psql(url, "SELECT state || ' ' || (progress IS NULL) FROM _batchrun_queue")
        #expect(ended == "done true", "the item: \(ended)")
    }
}
