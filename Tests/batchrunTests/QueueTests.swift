import Foundation
import GRDB
import Testing
import TestSupport

/// Queue folders end to end: submit, drop by hand, workers killed and stopped, a worker that
/// drains what is left; every item exactly once.
@Suite("Queue folders")
struct QueueTests {
    /// An item that inserts its 200 rows one batch at a time, then bumps the shared counter.
    static func item(_ number: Int) -> String {
        let rows = (1...200).map { "{ id: \(number * 1000 + $0), item: \(number) }" }.joined(separator: ", ")
        return """
            version: 1
            store: var/queue.sqlite
            entities:
              Row:
                columns: { id: integer primary key, item: integer not null }
              Counter:
                columns: { id: integer primary key, n: integer not null }
            jobs:
              load:
                batch_size: 1
                steps:
                  - insert: { entity: Row, rows: [\(rows)] }
              bump:
                needs: load
                merge_policy: recompute
                steps:
                  - batch-update: { entity: Counter, set: { n: "n + 1" } }
            """
    }

    static func spawnWorker(_ folder: TemporaryFolder, _ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = Batchrun.binary
        process.arguments = ["worker", "q"] + arguments
        process.currentDirectoryURL = folder.url
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Ended by SIGINT, or with its status (130) where the signal could not be re-raised.
    static func endedBySIGINT(_ process: Process) -> Bool {
        (process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGINT)
            || (process.terminationReason == .exit && process.terminationStatus == 130)
    }

    /// Whether a process runs: an ended one that nobody reaped yet (its parent is gone, and the
    /// system's first process may not reap) is a zombie, state Z in /proc.
    static func isRunning(_ pid: Int32) -> Bool {
        guard kill(pid, 0) == 0, let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        return stat[stat.index(close, offsetBy: 2)] != "Z"
    }

    /// The children of a process, started from any of its threads.
    static func children(of pid: Int32) -> [Int32] {
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return threads.flatMap { thread in
            let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(thread)/children", encoding: .utf8)) ?? ""
            return text.split(separator: " ").compactMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
    }

    @Test("two workers, one killed with SIGKILL mid-item and one stopped with SIGTERM, then one draining: every item exactly once")
    func workersKilledAndStopped() throws {
        let folder = try TemporaryFolder()
        let queue = try DatabaseQueue(path: { try? FileManager.default.createDirectory(atPath: folder.path("q/var"), withIntermediateDirectories: true); return folder.path("q/var/queue.sqlite") }())
        try queue.write { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "CREATE TABLE Row (id INTEGER PRIMARY KEY, item INTEGER NOT NULL)")
            try db.execute(sql: "CREATE TABLE Counter (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)")
            try db.execute(sql: "INSERT INTO Counter VALUES (1, 0)")
        }
        let items = 10
        for number in 1...8 { try folder.write("item\(number).yaml", Self.item(number)) }
        let submitted = try Batchrun.run(["submit", "q"] + (1...8).map { "item\($0).yaml" }, in: folder.url)
        #expect(submitted.status == 0, "\(submitted.stdout)\(submitted.stderr)")
        // Two dropped by hand: written outside pending/, renamed in; and a dot file, ignored.
        for number in 9...10 {
            try folder.write("q/.incoming-\(number)", Self.item(number))
            #expect(rename(folder.path("q/.incoming-\(number)"), folder.path("q/pending/zz-by-hand-\(number).yaml")) == 0)
        }
        try folder.write("q/pending/.draft.yaml", "not: [a job")

        let killed = try Self.spawnWorker(folder, ["--workers", "2"])
        let stopped = try Self.spawnWorker(folder, ["--workers", "2"])
        // Wait until both have items running, then kill one (and its items' processes) and stop the other.
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline && (Self.children(of: killed.processIdentifier).isEmpty || Self.children(of: stopped.processIdentifier).isEmpty) {
            Thread.sleep(forTimeInterval: 0.01)
        }
        Thread.sleep(forTimeInterval: 0.2)
        let orphans = Self.children(of: killed.processIdentifier)
        kill(killed.processIdentifier, SIGKILL)
        for child in orphans { kill(child, SIGKILL) }
        kill(stopped.processIdentifier, SIGTERM)
        killed.waitUntilExit()
        stopped.waitUntilExit()
        #expect(Self.endedBySIGINT(stopped))
        #expect(!orphans.isEmpty)

        let drain = try Batchrun.run(["worker", "q", "--once", "--workers", "2"], in: folder.url)
        #expect(drain.status == 0, "\(drain.stdout)\(drain.stderr)")
        #expect(drain.stdout.contains("taking over"), "\(drain.stdout)")

        let fm = FileManager.default
        let done = try fm.contentsOfDirectory(atPath: folder.path("q/done")).filter { $0.hasSuffix(".yaml") }
        #expect(done.count == items)
        for name in done {
            #expect(fm.fileExists(atPath: folder.path("q/done/\(name).json")) && fm.fileExists(atPath: folder.path("q/done/\(name).log")))
        }
        #expect(try fm.contentsOfDirectory(atPath: folder.path("q/pending")) == [".draft.yaml"])
        #expect(try fm.contentsOfDirectory(atPath: folder.path("q/running")).filter { $0.hasSuffix(".yaml") }.isEmpty)
        let failed = try fm.contentsOfDirectory(atPath: folder.path("q/failed")).filter { $0.hasSuffix(".log") }
        let logs = failed.map { (try? String(contentsOfFile: folder.path("q/failed/\($0)"), encoding: .utf8)) ?? "" }
        #expect(failed.isEmpty, "\(logs)")
        let (rows, perItem, counter) = try queue.read { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM Row")!,
             try Int.fetchAll(db, sql: "SELECT count(*) FROM Row GROUP BY item ORDER BY item"),
             try Int.fetchOne(db, sql: "SELECT n FROM Counter")!)
        }
        #expect(rows == items * 200 && perItem == Array(repeating: 200, count: items))
        #expect(counter == items)
    }

    @Test("invalid and failing items go to failed/ with their diagnostics; the worker goes on; params travel; name order")
    func failingItemsAndParams() throws {
        let folder = try TemporaryFolder()
        let good = """
            version: 1
            store: var/q.sqlite
            entities:
              Seen:
                columns: { id: integer primary key, tags: text not null }
            params:
              tag: none
            jobs:
              note:
                merge_policy: store-trump
                steps:
                  - insert: { entity: Seen, rows: [{ id: 1, tags: "" }] }
                  - batch-update: { entity: Seen, set: { tags: "tags || :tag || ','" } }
            """
        try folder.write("good.yaml", good)
        let refused = try Batchrun.run(["submit", "q", "good.yaml", "bad.yaml"], in: folder.url)
        #expect(refused.status == 2)
        #expect((try? FileManager.default.contentsOfDirectory(atPath: folder.path("q/pending")))?.isEmpty ?? true)
        #expect(try Batchrun.run(["submit", "q", "good.yaml", "--param", "tag=first"], in: folder.url).status == 0)
        #expect(try Batchrun.run(["submit", "q", "good.yaml", "--param", "tag=second"], in: folder.url).status == 0)
        // Dropped by hand: an item that is not a valid job file, and one that fails when it runs.
        try folder.write("q/pending/zz-1-invalid.yaml", "version: 1\nstore: var/q.sqlite\nentities: {}\njobs: { x: { steps: [] } }\n")
        try folder.write("q/pending/zz-2-failing.yaml", good.replacingOccurrences(of: "merge_policy: store-trump", with: "merge_policy: error"))
        let result = try Batchrun.run(["worker", "q", "--once"], in: folder.url)
        #expect(result.status == 2, "\(result.stdout)")
        let failed = try FileManager.default.contentsOfDirectory(atPath: folder.path("q/failed")).filter { $0.hasSuffix(".yaml") }.sorted()
        #expect(failed == ["zz-1-invalid.yaml", "zz-2-failing.yaml"])
        let log = try String(contentsOfFile: folder.path("q/failed/zz-1-invalid.yaml.log"), encoding: .utf8)
        #expect(log.contains("zz-1-invalid.yaml:4:"), "\(log)")
        let listing = try Batchrun.run(["queue", "q"], in: folder.url)
        #expect(listing.stdout.contains("pending 0 · scheduled 0 · retryable 0 · running 0 · done 2 · failed 2 · cancelled 0"), "\(listing.stdout)")
        #expect(listing.stdout.contains("zz-2-failing.yaml  error: "), "\(listing.stdout)")
        // The same as one self-contained page: a table per folder, finished items with their run.
        #expect(try Batchrun.run(["queue", "q", "--html", "queue.html"], in: folder.url).status == 0)
        let html = try String(contentsOfFile: folder.path("queue.html"), encoding: .utf8)
        let page = try HTMLDocument(html)
        #expect(!html.contains("<script") && !html.contains("href=\"http") && !html.contains("src="))
        let tables = page.elements("table")
        func names(_ state: String) -> [String] {
            tables.first { $0.attributes["class"] == "items \(state)" }.map { $0.elements("tr").dropFirst().map { $0.elements("td")[0].text } } ?? []
        }
        #expect(names("failed") == ["zz-1-invalid.yaml", "zz-2-failing.yaml"])
        #expect(names("done").count == 2 && names("pending").isEmpty && names("running").isEmpty)
        let failingRow = try #require(tables.flatMap { $0.elements("tr") }.first { $0.elements("td").first?.text == "zz-2-failing.yaml" })
        #expect(failingRow.elements("td")[2].text == "failed" && failingRow.elements("td")[5].text.contains("failed: note"),
                "\(failingRow.elements("td").map(\.text))")
        let tags = try DatabaseQueue(path: folder.path("q/var/q.sqlite")).read { db in
            try String.fetchOne(db, sql: "SELECT tags FROM Seen")
        }
        #expect(tags == "first,second,")   // params travelled, and items ran in name order
    }

    @Test("a waiting worker runs an item that appears")
    func waitingWorkerSeesNewItem() throws {
        let folder = try TemporaryFolder()
        try folder.write("job.yaml", """
            version: 1
            store: var/q.sqlite
            entities:
              Seen:
                columns: { id: integer primary key }
            jobs:
              note:
                steps:
                  - insert: { entity: Seen, rows: [{ id: 7 }] }
            """)
        let worker = try Self.spawnWorker(folder, [])
        defer { if worker.isRunning { kill(worker.processIdentifier, SIGKILL) } }
        Thread.sleep(forTimeInterval: 0.3)
        #expect(try Batchrun.run(["submit", "q", "job.yaml"], in: folder.url).status == 0)
        let deadline = Date().addingTimeInterval(30)
        var done: [String] = []
        while Date() < deadline && done.isEmpty {
            done = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path("q/done"))) ?? []).filter { $0.hasSuffix(".yaml") }
            Thread.sleep(forTimeInterval: 0.02)
        }
        #expect(done.count == 1)
        kill(worker.processIdentifier, SIGINT)
        worker.waitUntilExit()
        #expect(Self.endedBySIGINT(worker))
    }

    /// Hooks start with only standard input, output and error (Foundation's `Process` closes
    /// the rest), so the item's lock (the run's descriptor 3) dies with the run.
    @Test("an item whose hook outlives its killed run is taken over: the hook does not hold the item's lock")
    func hookDoesNotHoldTheLock() throws {
        let folder = try TemporaryFolder()
        try folder.write("slow.yaml", """
            version: 1
            store: var/q.sqlite
            entities:
              Seen:
                columns: { id: integer primary key }
            jobs:
              note:
                on_complete: "sleep 60"
                steps:
                  - insert: { entity: Seen, rows: [{ id: 7 }] }
            """)
        #expect(try Batchrun.run(["submit", "q", "slow.yaml"], in: folder.url).status == 0)
        let first = try Self.spawnWorker(folder, [])
        defer { if first.isRunning { kill(first.processIdentifier, SIGKILL) } }
        // Wait for the hook: the sleep, a child of the item's run.
        var run: Int32?, hook: Int32?
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline && hook == nil {
            run = Self.children(of: first.processIdentifier).first
            hook = run.flatMap { Self.children(of: $0).first }
            Thread.sleep(forTimeInterval: 0.02)
        }
        let sleeper = try #require(hook)
        defer { kill(sleeper, SIGKILL) }
        kill(first.processIdentifier, SIGKILL)
        if let run { kill(run, SIGKILL) }
        first.waitUntilExit()
        // The run is gone once its process is (its parent died too, so it may stay a zombie).
        let gone = Date().addingTimeInterval(10)
        while let run, Self.isRunning(run), Date() < gone { Thread.sleep(forTimeInterval: 0.01) }
        let drain = try Batchrun.run(["worker", "q", "--once"], in: folder.url)
        #expect(drain.status == 0, "\(drain.stdout)")
        #expect(drain.stdout.contains("taking over"), "\(drain.stdout)")
        let done = try FileManager.default.contentsOfDirectory(atPath: folder.path("q/done")).filter { $0.hasSuffix(".yaml") }
        #expect(done.count == 1)
        #expect(Self.isRunning(sleeper), "the hook was still running while its item was taken over")
    }

    @Test("an orphan whose run had ended ok goes to done/, not run again, its report rebuilt from the store (also over an earlier attempt's) or kept",
          arguments: ["no report", "an earlier attempt's report", "this run's report"])
    func finishedOrphanKeepsItsReport(left: String) throws {
        let folder = try TemporaryFolder()
        for store in ["q", "scratch"] {
            try FileManager.default.createDirectory(atPath: folder.path("\(store)/var"), withIntermediateDirectories: true)
            try DatabaseQueue(path: folder.path("\(store)/var/queue.sqlite")).write { db in
                try db.execute(sql: "CREATE TABLE Counter (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)")
                try db.execute(sql: "INSERT INTO Counter VALUES (1, 0)")
            }
        }
        let queue = try DatabaseQueue(path: folder.path("q/var/queue.sqlite"))
        try folder.write("item.yaml", Self.item(3))
        #expect(try Batchrun.run(["submit", "q", "item.yaml"], in: folder.url).status == 0)
        // A worker killed after its child recorded the run as ok but before the child wrote the
        // report: the item is in running/, unlocked, with its log and no report.
        let pending = try FileManager.default.contentsOfDirectory(atPath: folder.path("q/pending"))
        let name = try #require(pending.first { $0.hasSuffix(".yaml") })
        #expect(rename(folder.path("q/pending/\(name)"), folder.path("q/running/\(name)")) == 0)
        let run = try Batchrun.run(["run", "q/running/\(name)", "--resume", "--relative-to", "q"], in: folder.url)
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        try folder.write("q/running/\(name).log", run.stdout)

        let runID = try queue.read { db in try Int.fetchOne(db, sql: "SELECT max(id) FROM _batchrun_runs") }
        if left != "no report" {
            // A real report's shape, from the same item run elsewhere: marked as an earlier,
            // cancelled attempt's (which moved the item back to pending/ with its sidecars), or
            // as this run's own.
            try folder.write("scratch/item.yaml", Self.item(3))
            let scratch = try Batchrun.run(["run", "scratch/item.yaml", "--report", "scratch/report.json"], in: folder.url)
            #expect(scratch.status == 0, "\(scratch.stdout)\(scratch.stderr)")
            var object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: folder.url.appendingPathComponent("scratch/report.json"))) as? [String: Any])
            object["store"] = "kept"
            if left == "this run's report" {
                object["run_id"] = runID
            } else {
                object["status"] = "cancelled"
                object["run_id"] = 99
            }
            try JSONSerialization.data(withJSONObject: object).write(to: folder.url.appendingPathComponent("q/running/\(name).json"))
        }

        let drain = try Batchrun.run(["worker", "q", "--once"], in: folder.url)
        #expect(drain.status == 0, "\(drain.stdout)\(drain.stderr)")
        #expect(drain.stdout.contains("taking over"), "\(drain.stdout)")
        let report = try RunReportJSON(path: folder.path("q/done/\(name).json"))
        #expect(report.status == "ok" && report.runID != nil && report.runID == runID)
        #expect(report.jobs == ["load": 200, "bump": 1])
        #expect((report.store == "kept") == (left == "this run's report"))
        let log = try String(contentsOfFile: folder.path("q/done/\(name).log"), encoding: .utf8)
        #expect(log.contains("rebuilt from the store's run state") == (left != "this run's report"), "\(log)")
        let (rows, counter) = try queue.read { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM Row")!, try Int.fetchOne(db, sql: "SELECT n FROM Counter")!)
        }
        #expect(rows == 200 && counter == 1, "the item ran again")
    }

    @Test("an item the worker cannot move when it ends (done/ made a file by its hook) is said once, not also said done; --once exits 1")
    func itemThatCannotBeMoved() throws {
        let folder = try TemporaryFolder()
        try folder.write("job.yaml", """
            version: 1
            store: store.sqlite
            entities:
              T: { columns: { id: integer primary key } }
            jobs:
              load:
                on_success: "rm -rf '\(folder.path("q/done"))' && touch '\(folder.path("q/done"))'"
                steps:
                  - insert: { entity: T, rows: [{ id: 1 }] }
            """)
        #expect(try Batchrun.run(["submit", "q", "job.yaml"], in: folder.url).status == 0)
        let drain = try Batchrun.run(["worker", "q", "--once"], in: folder.url)
        #expect(drain.status == 1, "\(drain.stdout)\(drain.stderr)")
        let lines = (drain.stdout + drain.stderr).split(separator: "\n")
        #expect(lines.contains { $0.contains("cannot move") && $0.contains("to done") }, "\(drain.stdout)\(drain.stderr)")
        #expect(!lines.contains { $0.contains("  done ") }, "\(drain.stdout)\(drain.stderr)")
        // It stays where it ran, its report beside it.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path("q/running")).contains { $0.hasSuffix("job.yaml") })
    }
}
