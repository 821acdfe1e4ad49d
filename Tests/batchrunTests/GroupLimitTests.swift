import Foundation
import Testing
import TestSupport

/// Groups and their limits (JOBFILE.md 17) with real workers on a queue folder and on a real
/// PostgreSQL: `limit --running N` is never exceeded across 4 workers, sampled every 0.1 s,
/// while items outside the group are claimed past the waiting ones; `--rate N/PERIOD` starts at
/// most N of the group's items in any period; `queue` lists the limits and each item's group.
@Suite("group limits, end to end", .serialized)
struct GroupLimitTests {
    /// A job whose run lasts at least `seconds` (its `on_complete` hook sleeps).
    static func slowJob(_ queue: QueueFeatureTests.TestQueue, seconds: Double) -> String {
        """
        version: 1
        store: \(queue.folder.path("store.sqlite"))
        entities:
          T: { columns: { id: integer primary key } }
        jobs:
          wait:
            on_complete: "sleep \(seconds)"
            steps:
              - fetch: { entity: T }
        """
    }

    /// How many items of `group` are running now, as the limit counts them.
    static func running(_ queue: QueueFeatureTests.TestQueue, group: String) throws -> Int {
        if queue.isFolder {
            let folder = queue.folder.path("q/running")
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            return names.filter { name in
                name.hasSuffix(".yaml") && ((try? String(contentsOfFile: folder + "/" + name, encoding: .utf8)) ?? "").contains("# batchrun-group: \(group)\n")
            }.count
        }
        return Int(try PostgresServer.psql(queue.location, "SELECT count(*) FROM _batchrun_queue WHERE item_group = '\(group)' AND state = 'running'")) ?? -1
    }

    static func startWorkers(_ queue: QueueFeatureTests.TestQueue, count: Int) throws -> [Process] {
        try (0..<count).map { _ in
            try Batchrun.start(["worker", queue.location, "--jobs", "1", "--quiet"] + queue.workerOptions + (queue.isFolder ? [] : ["--allow-hooks"]),
                               in: queue.folder)
        }
    }

    @Test("--running 2 across 4 workers, two of them restarted midway, sampled every 0.1 s: never more than 2 of the group at once, 2 reached; items outside the group run past them",
          arguments: QueueFeatureTests.kinds)
    func runningLimit(kind: String) throws {
        let queue = try QueueFeatureTests.TestQueue(kind)
        try queue.folder.write("slow.yaml", Self.slowJob(queue, seconds: 0.5))
        let limited = try Batchrun.run(["limit", queue.location, "warehouse", "--running", "2"], in: queue.folder.url)
        #expect(limited.status == 0 && limited.stdout.contains("group warehouse: at most 2 running"), "\(limited.stdout)\(limited.stderr)")
        for _ in 0..<8 { try queue.submit("slow.yaml", ["--group", "warehouse"]) }
        let outside = try (0..<3).map { _ in try queue.submit("slow.yaml") }

        let listed = try Batchrun.run(["queue", queue.location, "--format", "json"], in: queue.folder.url)
        let listing = try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any] ?? [:]
        let limits = listing["limits"] as? [[String: Any]] ?? []
        #expect(limits.count == 1 && limits.first?["group"] as? String == "warehouse" && limits.first?["running"] as? Int == 2, "\(listed.stdout)")
        #expect((listing["items"] as? [[String: Any]] ?? []).filter { $0["group"] as? String == "warehouse" }.count == 8)

        var workers = try Self.startWorkers(queue, count: 4)
        defer { for worker in workers where worker.isRunning { kill(worker.processIdentifier, SIGKILL) } }
        var most = 0, outsideDoneFirst = false, restarted = false
        let deadline = Date().addingTimeInterval(120)
        while Date() < deadline {
            most = max(most, try Self.running(queue, group: "warehouse"))
            let items = try queue.items()
            // Midway, two workers stop (their items put back) and two new ones start: the limit
            // is the queue's, not a worker's, and holds for them too.
            if !restarted, items.values.filter({ $0["group"] as? String == "warehouse" && $0["state"] as? String == "done" }).count >= 3 {
                restarted = true
                for worker in workers[0..<2] { kill(worker.processIdentifier, SIGINT) }
                for worker in workers[0..<2] { worker.waitUntilExit() }
                workers.replaceSubrange(0..<2, with: try Self.startWorkers(queue, count: 2))
            }
            if !outsideDoneFirst, outside.allSatisfy({ items[$0]?["state"] as? String == "done" }) {
                // The items outside the group did not wait behind the group's 8, which take at least 4 rounds of 0.5 s.
                outsideDoneFirst = items.values.contains { $0["group"] as? String == "warehouse" && $0["state"] as? String != "done" }
            }
            if items.count == 11 && items.values.allSatisfy({ $0["state"] as? String == "done" }) { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        for worker in workers { kill(worker.processIdentifier, SIGINT) }
        for worker in workers { worker.waitUntilExit() }
        #expect(try queue.items().values.allSatisfy { $0["state"] as? String == "done" })
        #expect(most == 2, "at most \(most) of the group ran at once")
        #expect(restarted)
        #expect(outsideDoneFirst)
    }

    @Test("--rate 2/2s: of the group's items, no three start within 2 s; --clear removes the limit", arguments: QueueFeatureTests.kinds)
    func rateLimit(kind: String) throws {
        let queue = try QueueFeatureTests.TestQueue(kind)
        try queue.folder.write("quick.yaml", Self.slowJob(queue, seconds: 0))
        #expect(try Batchrun.run(["limit", queue.location, "feeds", "--rate", "2/2s"], in: queue.folder.url).status == 0)
        let names = try (0..<6).map { _ in try queue.submit("quick.yaml", ["--group", "feeds"]) }
        let workers = try Self.startWorkers(queue, count: 3)
        defer { for worker in workers where worker.isRunning { kill(worker.processIdentifier, SIGKILL) } }
        #expect(try queue.wait { try queue.items().values.allSatisfy { $0["state"] as? String == "done" } })
        for worker in workers { kill(worker.processIdentifier, SIGINT) }
        for worker in workers { worker.waitUntilExit() }
        // When each run started, to the millisecond, from the store's run ledger (a report's
        // `started_at` is in whole seconds: 1.9 s apart could read as 1).
        let starts = try StoreInspector(path: queue.folder.path("store.sqlite")).strings("SELECT started_at FROM _batchrun_runs")
            .map { text in try #require(ISO8601DateFormatter.withFractions.date(from: text), "\(text)").timeIntervalSince1970 }.sorted()
        #expect(starts.count == names.count)
        // A claim comes before its run starts by a varying moment: 0.5 s is allowed for it.
        for index in 0..<(starts.count - 2) {
            #expect(starts[index + 2] - starts[index] > 1.5, "three starts within 2 s: \(starts)")
        }
        let cleared = try Batchrun.run(["limit", queue.location, "feeds", "--clear"], in: queue.folder.url)
        #expect(cleared.status == 0 && cleared.stdout.contains("group feeds: no limit"), "\(cleared.stdout)\(cleared.stderr)")
        let listed = try Batchrun.run(["queue", queue.location], in: queue.folder.url)
        #expect(!listed.stdout.contains("\nlimits"), "\(listed.stdout)")
    }

    @Test("an item dropped by hand whose group line names no group submit takes (../) is in no group: listed without one, run, nothing made outside limits/")
    func handDroppedGroup() throws {
        let queue = try QueueFeatureTests.TestQueue("folder")
        try queue.folder.write("q/pending/dropped.yaml", "# batchrun-group: ../../escape\n" + Self.slowJob(queue, seconds: 0))
        #expect(try Batchrun.run(["limit", "q", "other", "--running", "1"], in: queue.folder.url).status == 0)
        #expect(try queue.items()["dropped.yaml"]?["group"] == nil)
        #expect(try queue.worker(["--once"]).status == 0)
        #expect(try queue.items()["dropped.yaml"]?["state"] as? String == "done")
        #expect(!FileManager.default.fileExists(atPath: queue.folder.path("escape.lock")))
    }

    @Test("bad limits and groups are exit 2 naming what is wrong")
    func badInput() throws {
        let folder = try TemporaryFolder()
        for (arguments, message) in [(["limit", "q", "g"], "give --running and/or --rate, or --clear"),
                                     (["limit", "q", "g", "--running", "0"], "--running must be at least 1"),
                                     (["limit", "q", "g", "--rate", "3"], "--rate must be N/PERIOD"),
                                     (["limit", "q", "a b", "--running", "1"], "a group is 1 to 64 letters"),
                                     (["submit", "q", "x.yaml", "--group", "no/slash"], "--group must be 1 to 64 letters")] {
            let result = try Batchrun.run(arguments, in: folder.url)
            #expect(result.status == 2 && result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
    }
}

extension ISO8601DateFormatter {
    /// `2026-11-29T12:00:00.123Z`.
    static var withFractions: ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }
}
