import Foundation
import Testing
import TestSupport

/// `batchrun prune` and `worker --keep` (JOBFILE.md 18) on a queue folder and on a real
/// PostgreSQL: finished items older than the limit go with their logs and reports (done only
/// unless `--state` says more); a batch that is not finished keeps its items; the stores' run
/// state is untouched.
@Suite("prune and --keep, end to end", .serialized)
struct PruneTests {
    /// Four done items, a failed one, a cancelled one, and a fan-out batch of three parts whose
    /// second fails (a bad row): two of its parts done, held by the third.
    static func finishedItems(_ queue: QueueFeatureTests.TestQueue) throws -> (done: [String], failed: String, cancelled: String) {
        try queue.folder.write("quick.yaml", GroupLimitTests.slowJob(queue, seconds: 0))
        try queue.folder.write("broken.yaml", GroupLimitTests.slowJob(queue, seconds: 0)
            .replacingOccurrences(of: "- fetch: { entity: T }", with: "- insert: { entity: T, from: \(queue.folder.path("missing.csv")) }"))
        try Self.writeBatch(queue, badPart: 2)
        let done = try (0..<4).map { _ in try queue.submit("quick.yaml") }
        try queue.folder.write("missing.csv", "id\n1\n")
        let failed = try queue.submit("broken.yaml")
        try FileManager.default.removeItem(atPath: queue.folder.path("missing.csv"))   // gone when it runs: it fails
        let cancelled = try queue.submit("quick.yaml", ["--in", "1h"])
        #expect(try Batchrun.run(["cancel", queue.location, cancelled], in: queue.folder.url).status == 0)
        #expect(try Batchrun.run(["submit", queue.location, "batch.yaml", "--fan-out", "load"], in: queue.folder.url).status == 0)
        _ = try queue.worker(["--once"] + (queue.isFolder ? [] : ["--allow-hooks"]))
        Thread.sleep(forTimeInterval: 1.2)   // every one of them ended more than a second ago
        return (done, failed, cancelled)
    }

    /// `batch.yaml`: a job `load` of three parts in `data/` into `P`; part `badPart` has a bad row (its item fails).
    static func writeBatch(_ queue: QueueFeatureTests.TestQueue, badPart: Int?) throws {
        for part in 1...3 {
            try queue.folder.write("data/part-\(part).csv", "id,v\n\(part),\(part == badPart ? "not a number" : "1")\n")
        }
        try queue.folder.write("batch.yaml", """
            version: 1
            store: \(queue.folder.path("store.sqlite"))
            entities:
              P: { columns: { id: integer primary key, v: integer } }
            jobs:
              load:
                steps:
                  - insert: { entity: P, from: "\(queue.folder.path("data"))/part-*.csv" }
            """)
    }

    static func runCount(_ queue: QueueFeatureTests.TestQueue) throws -> Int {
        try StoreInspector(path: queue.folder.path("store.sqlite")).count("SELECT count(*) FROM _batchrun_runs")
    }

    @Test("prune: nothing younger than --older-than; done items go with their logs and reports, failed and cancelled ones only with --state; a batch not finished keeps its items; the run state stays",
          arguments: QueueFeatureTests.kinds)
    func prune(kind: String) throws {
        let queue = try QueueFeatureTests.TestQueue(kind)
        let (done, failed, cancelled) = try Self.finishedItems(queue)
        let before = try queue.items()
        #expect(done.allSatisfy { before[$0]?["state"] as? String == "done" } && before[failed]?["state"] as? String == "failed"
                && before[cancelled]?["state"] as? String == "cancelled", "\(before)")
        let batchItems = before.filter { $0.value["batch"] != nil }
        #expect(batchItems.count == 3)
        let runs = try Self.runCount(queue)

        let young = try Batchrun.run(["prune", queue.location, "--older-than", "1h"], in: queue.folder.url)
        #expect(young.status == 0 && young.stdout.contains("pruned 0 items (done)"), "\(young.stdout)\(young.stderr)")
        let pruned = try Batchrun.run(["prune", queue.location, "--older-than", "1s"], in: queue.folder.url)
        #expect(pruned.status == 0 && pruned.stdout.contains("pruned 4 items (done)"), "\(pruned.stdout)\(pruned.stderr)")
        var after = try queue.items()
        #expect(done.allSatisfy { after[$0] == nil })
        #expect(after[failed] != nil && after[cancelled] != nil)
        #expect(Set(after.filter { $0.value["batch"] != nil }.keys) == Set(batchItems.keys), "a batch not finished keeps its done parts")
        if queue.isFolder {
            let left = try FileManager.default.contentsOfDirectory(atPath: queue.folder.path("q/done"))
            #expect(!left.contains { name in done.contains { name.hasPrefix($0) } }, "\(left)")
        }
        #expect(try Batchrun.run(["queue", queue.location, "--log", done[0]], in: queue.folder.url).status == 2)

        let more = try Batchrun.run(["prune", queue.location, "--older-than", "1s", "--state", "failed", "--state", "cancelled"], in: queue.folder.url)
        #expect(more.status == 0 && more.stdout.contains("pruned 2 items (cancelled, failed)"), "\(more.stdout)\(more.stderr)")
        after = try queue.items()
        #expect(after[failed] == nil && after[cancelled] == nil)
        #expect(after.count == 3, "the batch's three items: \(after)")
        #expect(try Self.runCount(queue) == runs, "the store's run state is untouched")
    }

    @Test("worker --keep 1s prunes the done items once a minute, beginning as it starts, and says so", arguments: QueueFeatureTests.kinds)
    func keep(kind: String) throws {
        let queue = try QueueFeatureTests.TestQueue(kind)
        let (done, _, _) = try Self.finishedItems(queue)
        let output = queue.folder.url.appendingPathComponent("keep-worker.out")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let worker = try Batchrun.start(["worker", queue.location, "--keep", "1s"] + queue.workerOptions, in: queue.folder,
                                        output: try FileHandle(forWritingTo: output))
        defer {
            kill(worker.processIdentifier, SIGINT)
            worker.waitUntilExit()
        }
        #expect(try queue.wait { let items = try queue.items(); return done.allSatisfy { items[$0] == nil } })
        #expect(queue.wait { ((try? String(contentsOf: output, encoding: .utf8)) ?? "").contains("pruned 4 done items older than --keep") })
    }
}

extension PruneTests {
    @Test("a finished batch pruned over two runs (its parts ended at different times): the rest goes the second time, then its record; never shown as waiting")
    func finishedBatchInTwoRuns() throws {
        let queue = try QueueFeatureTests.TestQueue("folder")
        try Self.writeBatch(queue, badPart: nil)
        #expect(try Batchrun.run(["submit", "q", "batch.yaml", "--fan-out", "load"], in: queue.folder.url).status == 0)
        #expect(try queue.worker(["--once"]).status == 0)
        // Two of the parts ended two days ago.
        let done = try FileManager.default.contentsOfDirectory(atPath: queue.folder.path("q/done")).filter { $0.hasSuffix(".yaml") }.sorted()
        #expect(done.count == 3)
        for name in done.prefix(2) {
            try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-2 * 86_400)], ofItemAtPath: queue.folder.path("q/done/\(name).json"))
        }
        let first = try Batchrun.run(["prune", "q", "--older-than", "1d"], in: queue.folder.url)
        #expect(first.stdout.contains("pruned 2 items"), "\(first.stdout)\(first.stderr)")
        let between = try Batchrun.run(["queue", "q", "--batch", "1"], in: queue.folder.url)
        #expect(between.stdout.contains("3 parts: done 3"), "\(between.stdout)")
        Thread.sleep(forTimeInterval: 1.2)
        let second = try Batchrun.run(["prune", "q", "--older-than", "1s"], in: queue.folder.url)
        #expect(second.stdout.contains("pruned 1 item"), "\(second.stdout)\(second.stderr)")
        #expect(!FileManager.default.fileExists(atPath: queue.folder.path("q/batches/1")))
    }
}
