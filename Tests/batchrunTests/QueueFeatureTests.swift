import Foundation
import GRDB
import Testing
import TestSupport
import BatchRunKit

/// What River, Oban and Sidekiq users expect of a queue, on both kinds (a folder and
/// PostgreSQL), through the real binary: priorities, delays, cancelling, retries with backoff,
/// unique items, the listing's fields.
@Suite("Queue features: priorities, delays, cancel, retries, unique")
struct QueueFeatureTests {
    static let kinds = ["folder", "postgresql"]

    /// A queue of the kind in `folder`: its location, and the worker's options it needs.
    struct TestQueue {
        let folder: TemporaryFolder
        let location: String
        let workerOptions: [String]

        init(_ kind: String) throws {
            folder = try TemporaryFolder()
            if kind == "folder" {
                location = "q"
                workerOptions = []
                try FileManager.default.createDirectory(atPath: folder.path("q/pending"), withIntermediateDirectories: true)
            } else {
                location = try PostgresServer.database("features")
                workerOptions = ["--trust-submitters"]
            }
        }

        var isFolder: Bool { location == "q" }

        /// `submit`; the item's name as `queue` and `cancel` take it.
        @discardableResult
        func submit(_ file: String, _ options: [String] = []) throws -> String {
            let result = try Batchrun.run(["submit", location, file] + options, in: folder.url)
            #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
            return Self.itemName(result.stdout)
        }

        /// The item a `submit` line names: `pending/NAME` gives NAME, `item 12 on URL` gives 12.
        static func itemName(_ output: String) -> String {
            let named = output.split(separator: "\n").last.map(String.init) ?? ""
            if let range = named.range(of: " as item ") {
                return String(named[range.upperBound...].prefix { $0.isNumber })
            }
            let path = named.split(separator: " ").last.map(String.init) ?? ""
            return path.split(separator: "/").last.map(String.init) ?? path
        }

        func worker(_ arguments: [String], environment: [String: String] = [:]) throws -> Batchrun.Result {
            try Batchrun.run(["worker", location, "--jobs", "1"] + workerOptions + arguments, in: folder.url, environment: environment)
        }

        /// `queue --format json`'s items by name (folder) or id (PostgreSQL).
        func items() throws -> [String: [String: Any]] {
            let listed = try Batchrun.run(["queue", location, "--format", "json"], in: folder.url)
            #expect(listed.status == 0, "\(listed.stderr)")
            let listing = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any])
            var items: [String: [String: Any]] = [:]
            for item in listing["items"] as? [[String: Any]] ?? [] {
                let key = (item["id"] as? Int).map(String.init) ?? item["name"] as? String ?? ""
                items[key] = item
            }
            return items
        }

        func state(_ name: String) throws -> String? { try items()[name]?["state"] as? String }

        /// Waits (up to 60 s) until `condition` holds.
        func wait(_ condition: () throws -> Bool) rethrows -> Bool {
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline {
                if try condition() { return true }
                Thread.sleep(forTimeInterval: 0.1)
            }
            return false
        }
    }

    /// A job that appends `:tag` to a row of the SQLite store at `store` (an absolute path, so
    /// both queue kinds find it).
    static func tagJob(store: String) -> String {
        """
        version: 1
        store: \(store)
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
    }

    /// `YYYYMMDDTHHMMSS` in UTC as a date.
    static func parseStamp(_ stamp: String) -> Date? {
        let digits = Array(stamp.filter(\.isNumber))
        guard digits.count >= 14 else { return nil }
        func part(_ range: Range<Int>) -> String { String(digits[range]) }
        return QueueSubmission.time("\(part(0..<4))-\(part(4..<6))-\(part(6..<8))T\(part(8..<10)):\(part(10..<12)):\(part(12..<14))Z")
    }

    static func tags(_ store: String) throws -> String? {
        try DatabaseQueue(path: store).read { db in try String.fetchOne(db, sql: "SELECT tags FROM Seen") }
    }

    @Test("priority order with one worker (higher first, submission order within); --in is not claimed early, and runs once due", arguments: kinds)
    func priorityAndDelay(kind: String) throws {
        let queue = try TestQueue(kind)
        let store = queue.folder.path("tags.sqlite")
        try queue.folder.write("tag.yaml", Self.tagJob(store: store))
        let later = try queue.submit("tag.yaml", ["--param", "tag=later", "--in", "1h", "--priority", "9"])
        for (tag, priority) in [("a", 0), ("b", 5), ("c", -1), ("d", 5), ("e", 0), ("f", -3), ("g", 12)] {
            try queue.submit("tag.yaml", ["--param", "tag=\(tag)", "--priority=\(priority)"])   // = for a negative one
        }
        let scheduled = try #require(try queue.items()[later])
        #expect(scheduled["state"] as? String == "scheduled")
        #expect(scheduled["priority"] as? Int == 9)
        #expect((scheduled["run_at"] as? String)?.hasSuffix("Z") == true, "\(scheduled)")

        let drained = try queue.worker(["--once"])
        #expect(drained.status == 0, "\(drained.stdout)\(drained.stderr)")
        #expect(try Self.tags(store) == "g,b,d,a,e,c,f,")
        #expect(try queue.state(later) == "scheduled")   // due in an hour: not claimed, and --once did not wait for it

        // An hour later (the test-only clock offset): due, claimed and run.
        let due = try queue.worker(["--once"], environment: ["BATCHRUN_TEST_CLOCK_OFFSET": "3700"])
        #expect(due.status == 0, "\(due.stdout)\(due.stderr)")
        #expect(try queue.state(later) == "done")
        #expect(try Self.tags(store) == "g,b,d,a,e,c,f,later,")
    }

    @Test("--at a past time runs at once; --at and --in together, a bad time, a bad priority: exit 2 before anything is queued", arguments: kinds)
    func atAndRefusals(kind: String) throws {
        let queue = try TestQueue(kind)
        let store = queue.folder.path("tags.sqlite")
        try queue.folder.write("tag.yaml", Self.tagJob(store: store))
        for options in [["--at", "2026-12-01T03:00Z", "--in", "1h"], ["--at", "tomorrow"], ["--priority", "100000"], ["--in", "soon"],
                        ["--attempts", "0"], ["--in", "99999999999h"], ["--attempts", "1001"], ["--backoff", "200h"]] {
            let refused = try Batchrun.run(["submit", queue.location, "tag.yaml"] + options, in: queue.folder.url)
            #expect(refused.status == 2, "\(options): \(refused.stdout)\(refused.stderr)")
            if options == ["--in", "99999999999h"] { #expect(refused.stderr.contains("--in must end by 9999-12-31T23:59:59Z"), "\(refused.stderr)") }
        }
        #expect(try queue.items().isEmpty)
        let past = try queue.submit("tag.yaml", ["--at", "2020-01-01T00:00Z", "--param", "tag=past"])
        let future = try queue.submit("tag.yaml", ["--at", "2999-01-01T00:00:00+01:00", "--param", "tag=future"])
        #expect(try queue.items()[future]?["run_at"] as? String == "2998-12-31T23:00:00Z")
        #expect(try queue.worker(["--once"]).status == 0)
        #expect(try queue.state(past) == "done")
        #expect(try queue.state(future) == "scheduled")
        #expect(try Self.tags(store) == "past,")
    }

    @Test("cancel: a pending and a scheduled item end cancelled and never run; an ended one is left; an unknown one is exit 2", arguments: kinds)
    func cancelWaiting(kind: String) throws {
        let queue = try TestQueue(kind)
        let store = queue.folder.path("tags.sqlite")
        try queue.folder.write("tag.yaml", Self.tagJob(store: store))
        let pending = try queue.submit("tag.yaml", ["--param", "tag=pending"])
        let scheduled = try queue.submit("tag.yaml", ["--param", "tag=scheduled", "--in", "10m"])
        let kept = try queue.submit("tag.yaml", ["--param", "tag=kept"])
        let cancelled = try Batchrun.run(["cancel", queue.location, pending, scheduled], in: queue.folder.url)
        #expect(cancelled.status == 0, "\(cancelled.stdout)\(cancelled.stderr)")
        #expect(cancelled.stdout.contains("cancelled \(pending)") && cancelled.stdout.contains("cancelled \(scheduled)"), "\(cancelled.stdout)")
        #expect(try queue.worker(["--once"], environment: ["BATCHRUN_TEST_CLOCK_OFFSET": "3600"]).status == 0)
        let items = try queue.items()
        #expect(items[pending]?["state"] as? String == "cancelled" && items[scheduled]?["state"] as? String == "cancelled")
        #expect(items[kept]?["state"] as? String == "done")
        #expect(try Self.tags(store) == "kept,")
        if queue.isFolder { #expect(FileManager.default.fileExists(atPath: queue.folder.path("q/cancelled/\(pending)"))) }

        let again = try Batchrun.run(["cancel", queue.location, kept], in: queue.folder.url)
        #expect(again.status == 0 && again.stdout.contains("already ended done"), "\(again.stdout)")
        let unknown = try Batchrun.run(["cancel", queue.location, "999999"], in: queue.folder.url)
        #expect(unknown.status == 2 && unknown.stderr.contains("no item 999999"), "\(unknown.stderr)")
    }

    @Test("cancel a running item: its run is cancelled as Ctrl-C cancels it (whole batches only in the store), it ends cancelled, and the worker goes on", arguments: kinds)
    func cancelRunning(kind: String) throws {
        let queue = try TestQueue(kind)
        try Batchrun.writeLongFeed(in: queue.folder)
        let store = queue.folder.path("long.sqlite")
        try queue.folder.write("long.yaml", """
            version: 1
            store: \(store)
            entities:
              Row:
                columns: { id: integer primary key, minutes: integer not null }
            jobs:
              load:
                batch_size: 100
                steps:
                  - insert: { entity: Row, from: \(queue.folder.path("feed.csv")) }
            """)
        try queue.folder.write("tag.yaml", Self.tagJob(store: queue.folder.path("tags.sqlite")))
        let long = try queue.submit("long.yaml")
        let output = queue.folder.path("worker.log")
        #expect(FileManager.default.createFile(atPath: output, contents: nil))
        let worker = try Batchrun.start(["worker", queue.location, "--jobs", "1"] + queue.workerOptions, in: queue.folder,
                                        output: try FileHandle(forWritingTo: URL(fileURLWithPath: output)))
        defer { if worker.isRunning { kill(worker.processIdentifier, SIGKILL) } }
        func rows() -> Int {
            (try? DatabaseQueue(path: store).read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM Row") }) ?? 0
        }
        #expect(queue.wait { rows() > 0 })
        let cancelled = try Batchrun.run(["cancel", queue.location, long], in: queue.folder.url)
        #expect(cancelled.status == 0 && cancelled.stdout.contains("cancelling \(long)"), "\(cancelled.stdout)\(cancelled.stderr)")
        #expect(try queue.wait { try queue.state(long) == "cancelled" })
        let kept = rows()
        #expect(kept > 0 && kept < 400_000 && kept % 100 == 0, "\(kept) rows")   // whole batches only
        #expect(worker.isRunning)
        // The worker goes on with the next item.
        let next = try queue.submit("tag.yaml", ["--param", "tag=next"])
        #expect(try queue.wait { try queue.state(next) == "done" })
        kill(worker.processIdentifier, SIGINT)
        worker.waitUntilExit()
        #expect(QueueTests.endedBySIGINT(worker))
        #expect(rows() == kept)
        let log = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        #expect(log.contains("cancelling") && log.contains("cancelled"), "\(log)")
    }

    /// A job that inserts row `id` under merge policy `error`: it fails while the row is there.
    static func insertJob(store: String, id: Int) -> String {
        """
        version: 1
        store: \(store)
        entities:
          T:
            columns: { id: integer primary key, v: text not null }
        jobs:
          load:
            steps:
              - insert: { entity: T, rows: [{ id: \(id), v: new }] }
        """
    }

    static func execute(_ store: String, _ sql: String) throws {
        try DatabaseQueue(path: store).write { db in try db.execute(sql: sql) }
    }

    @Test("--attempts/--backoff: a failing item is retryable with its attempts and next try, mended between attempts it ends done after 2; one never mended ends failed after its last, every attempt's log kept", arguments: kinds)
    func retries(kind: String) throws {
        let queue = try TestQueue(kind)
        let store = queue.folder.path("t.sqlite")
        try Self.execute(store, "CREATE TABLE T (id INTEGER PRIMARY KEY, v TEXT NOT NULL); INSERT INTO T VALUES (1, 'old'), (2, 'old')")
        try queue.folder.write("mended.yaml", Self.insertJob(store: store, id: 1))
        try queue.folder.write("broken.yaml", Self.insertJob(store: store, id: 2))
        // An item with a hook the worker will not run is invalid: not retried.
        try queue.folder.write("invalid.yaml", Self.insertJob(store: store, id: 3).replacingOccurrences(of: "  load:\n", with: "  load:\n    on_complete: \"true\"\n"))
        let mended = try queue.submit("mended.yaml", ["--attempts", "3", "--backoff", "30s"])
        let broken = try queue.submit("broken.yaml", ["--attempts", "2", "--backoff", "30s"])
        let invalid = try queue.submit("invalid.yaml", ["--attempts", "3"])
        let noHooks = queue.isFolder ? ["--no-hooks"] : []
        func log(of name: String, in state: String) throws -> String {
            if queue.isFolder { return try String(contentsOfFile: queue.folder.path("q/\(state)/\(name).log"), encoding: .utf8) }
            return try Batchrun.run(["queue", queue.location, "--log", name], in: queue.folder.url).stdout
        }

        let first = try queue.worker(["--once"] + noHooks)
        #expect(first.status == 2, "\(first.stdout)\(first.stderr)")   // the invalid item: not retried
        var items = try queue.items()
        for name in [mended, broken] {
            #expect(items[name]?["state"] as? String == "retryable", "\(items)")
            #expect(items[name]?["attempts"] as? Int == 1)
            #expect(items[name]?["run_at"] is String, "\(items[name] ?? [:])")
        }
        #expect(items[invalid]?["state"] as? String == "failed" && items[invalid]?["attempts"] as? Int == 1)
        let listed = try Batchrun.run(["queue", queue.location], in: queue.folder.url)
        #expect(listed.stdout.contains("next try") && listed.stdout.contains("attempt 1 of 3"), "\(listed.stdout)")
        let failedOnce = try log(of: broken, in: "retryable").components(separatedBy: "ERROR load").count - 1
        #expect(failedOnce > 0)
        #expect(try queue.worker(["--once"] + noHooks).status == 0)   // not due yet: nothing claimed
        #expect(try queue.state(mended) == "retryable")

        try Self.execute(store, "DELETE FROM T WHERE id = 1")   // mended
        let second = try queue.worker(["--once"] + noHooks, environment: ["BATCHRUN_TEST_CLOCK_OFFSET": "3600"])
        #expect(second.status == 1, "\(second.stdout)\(second.stderr)")   // broken's last attempt failed
        items = try queue.items()
        #expect(items[mended]?["state"] as? String == "done" && items[mended]?["attempts"] as? Int == 2, "\(items)")
        #expect(items[broken]?["state"] as? String == "failed" && items[broken]?["attempts"] as? Int == 2, "\(items)")
        let both = try log(of: broken, in: "failed")
        #expect(both.components(separatedBy: "ERROR load").count - 1 == 2 * failedOnce, "\(both)")   // both attempts' output
        #expect(try DatabaseQueue(path: store).read { db in try String.fetchOne(db, sql: "SELECT group_concat(id || v) FROM T") } == "1new,2old")
    }

    @Test("--unique: the same file with the same params twice queues one item (exit 0, naming it); other params, or once it ended, queue again", arguments: kinds)
    func unique(kind: String) throws {
        let queue = try TestQueue(kind)
        let store = queue.folder.path("tags.sqlite")
        try queue.folder.write("tag.yaml", Self.tagJob(store: store))
        let first = try queue.submit("tag.yaml", ["--unique", "--param", "tag=a"])
        let again = try Batchrun.run(["submit", queue.location, "tag.yaml", "--unique", "--param", "tag=a"], in: queue.folder.url)
        #expect(again.status == 0 && again.stdout.contains("not queued again") && again.stdout.contains(first), "\(again.stdout)")
        let other = try queue.submit("tag.yaml", ["--unique", "--param", "tag=b"])
        #expect(other != first)
        #expect(try queue.items().count == 2)
        #expect(try queue.worker(["--once"]).status == 0)
        let later = try queue.submit("tag.yaml", ["--unique", "--param", "tag=a"])
        #expect(later != first)
        #expect(try queue.items().count == 3)
    }

    /// Submitting many unique items at once from several processes: one each.
    @Test("--unique from 6 processes at once queues the item once", arguments: kinds)
    func uniqueAtOnce(kind: String) throws {
        let queue = try TestQueue(kind)
        try queue.folder.write("tag.yaml", Self.tagJob(store: queue.folder.path("tags.sqlite")))
        _ = try queue.items()   // the queue made before the race
        let submitters = try (0..<6).map { _ in try Batchrun.start(["submit", queue.location, "tag.yaml", "--unique"], in: queue.folder) }
        for submitter in submitters { submitter.waitUntilExit() }
        #expect(submitters.allSatisfy { $0.terminationStatus == 0 })
        #expect(try queue.items().count == 1)
    }

    @Test("one face for both kinds: queue --log and --report print an item's output by the name queue lists, --html draws the same page, an unknown item is exit 2", arguments: kinds)
    func outputAndPageOnBothKinds(kind: String) throws {
        let queue = try TestQueue(kind)
        try queue.folder.write("ok.yaml", Self.tagJob(store: queue.folder.path("ok.sqlite")))
        // It runs after ok.yaml, whose row it inserts again: under `merge_policy: error` its job fails.
        try queue.folder.write("bad.yaml", Self.tagJob(store: queue.folder.path("ok.sqlite")).replacingOccurrences(of: "merge_policy: store-trump", with: "merge_policy: error"))
        let ok = try queue.submit("ok.yaml", ["--param", "tag=first"])
        let bad = try queue.submit("bad.yaml")
        #expect(try queue.worker(["--once", "-q"]).status == 1, "the worst of its items: one failed")

        let log = try Batchrun.run(["queue", queue.location, "--log", ok], in: queue.folder.url)
        #expect(log.status == 0, "\(log.stderr)")
        #expect(log.stdout.contains("OK    note") && log.stdout.contains("OK=1"), "\(log.stdout)")
        let report = try Batchrun.run(["queue", queue.location, "--report", ok], in: queue.folder.url)
        #expect(report.status == 0, "\(report.stderr)")
        let decoded = try #require(try JSONSerialization.jsonObject(with: Data(report.stdout.utf8)) as? [String: Any])
        #expect(decoded["status"] as? String == "ok", "\(report.stdout)")
        #expect(try Self.tags(queue.folder.path("ok.sqlite")) == "first,", "the item ran with its param")
        let failed = try Batchrun.run(["queue", queue.location, "--log", bad], in: queue.folder.url)
        #expect(failed.status == 0 && failed.stdout.contains("ERROR note") && failed.stdout.contains("ERROR=1"), "the failed item's log: \(failed.stdout)")

        let unknown = try Batchrun.run(["queue", queue.location, "--report", "20990101T000000000-0001-none.yaml"], in: queue.folder.url)
        #expect(unknown.status == 2 && unknown.stderr.contains("error: no item 20990101T000000000-0001-none.yaml in"), "\(unknown.stderr)")

        let page = try Batchrun.run(["queue", queue.location, "--html", "q.html"], in: queue.folder.url)
        #expect(page.status == 0, "\(page.stderr)")
        let html = try String(contentsOfFile: queue.folder.path("q.html"), encoding: .utf8)
        #expect(html.contains("1 done") && html.contains("1 failed"), "the counts")
        // Each finished item's run, from the report the queue keeps: its status badge and its jobs.
        #expect(html.contains(">ok</span>") && html.contains("1 job"), "the done item's run")
        #expect(html.contains("failed: note"), "the failed item's failed job")
    }
}
