import Foundation
import Testing
import TestSupport

/// A server that goes away mid-run: the binary reconnects with backoff for up to the store's
/// `reconnect`, carries on from a fresh read of the batch in flight, ends ok with every row
/// exactly once, and counts the reconnects in its report; past the window the job fails and
/// `--resume` goes on later.
@Suite("PostgreSQL: a server that goes away")
struct PostgresReconnectTests {
    static let rows = 400_000

    /// An import of `feed.csv` (`id,minutes`, given keys: a batch applied twice would collide
    /// under merge_policy error and fail the job).
    static func importJob(_ url: String, reconnect: String? = nil) -> String {
        let store = reconnect.map { "{ postgres: \"\(url)\", reconnect: \($0) }" } ?? "{ postgres: \"\(url)\" }"
        return """
            version: 1
            store: \(store)
            entities:
              Item: { columns: { id: integer primary key, minutes: integer not null } }
            jobs:
              load:
                batch_size: 5000
                steps:
                  - insert: { entity: Item, from: feed.csv }
            """
    }

    /// A run of the binary these tests disturb: its folder (the long feed when asked for,
    /// `job.yaml` when given), started with `arguments` (by default the job with `--report
    /// r.json`), its output in `run.log`; killed when the test ends with it still running.
    final class Launched {
        let folder: TemporaryFolder
        let process: Process

        init(job: String?, feed: Bool = true, arguments: [String] = ["job.yaml", "--report", "r.json"],
             before: (TemporaryFolder) throws -> Void = { _ in }) throws {
            folder = try TemporaryFolder()
            if feed { try Batchrun.writeLongFeed(in: folder) }
            if let job { try folder.write("job.yaml", job) }
            try before(folder)
            let log = try FileHandle(forWritingTo: URL(fileURLWithPath: folder.write("run.log", "")))
            process = try Batchrun.start(arguments, in: folder, output: log)
        }

        deinit {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }

        /// Waits until `query` on `url` answers something other than "0" (by default: table
        /// `item` has rows, the import is under way); false after 120 s or once the run ended.
        func waitFor(_ url: String, _ query: String = "SELECT count(*) FROM item") -> Bool {
            let deadline = Date().addingTimeInterval(120)
            while Date() < deadline && process.isRunning {
                if let answer = try? PostgresServer.psql(url, query), answer != "0", !answer.isEmpty { return true }
                Thread.sleep(forTimeInterval: 0.05)
            }
            return false
        }

        /// The run's output and exit status, once it ended.
        func finish() throws -> (status: Int32, output: String) {
            process.waitUntilExit()
            return (process.terminationStatus, try String(contentsOfFile: folder.path("run.log"), encoding: .utf8))
        }

        /// The job's `reconnects` in the JSON report.
        func reconnects(job: String = "load") throws -> Int? {
            ((try folder.json("r.json")["jobs"] as? [[String: Any]])?.first { $0["name"] as? String == job })?["reconnects"] as? Int
        }

        /// The job's `rows.KIND` in the JSON report.
        func rows(_ kind: String) throws -> Int? {
            ((try folder.json("r.json")["jobs"] as? [[String: Any]])?.first?["rows"] as? [String: Any])?[kind] as? Int
        }
    }

    /// Every key of the feed once: as many rows as the feed has, keys 1 to `rows`, and the sum of the minutes.
    static func expectEveryRowOnce(_ url: String) throws {
        #expect(try PostgresServer.psql(url, "SELECT count(*) || ' ' || count(DISTINCT id) || ' ' || min(id) || ' ' || max(id) FROM item")
                == "\(rows) \(rows) 1 \(rows)")
        #expect(try PostgresServer.psql(url, "SELECT sum(minutes) FROM item") == String((1...rows).reduce(0) { $0 + $1 % 600 }))
    }

    @Test("the server stopped (pg_ctl stop -m fast) for 3 s and started again mid-import: exit 0, every row once, the reconnect counted")
    func restartMidImport() throws {
        let cluster = try PostgresServer.start()
        defer { try? cluster.stop() }
        let url = try cluster.database("restarted")
        let run = try Launched(job: Self.importJob(url))
        #expect(run.waitFor(url), "the import never showed rows")
        try cluster.halt()
        Thread.sleep(forTimeInterval: 3)
        try cluster.resume()
        let (status, output) = try run.finish()
        #expect(status == 0, "\(output)")
        try Self.expectEveryRowOnce(url)
        #expect(try run.reconnects() ?? 0 >= 1, "\(output)")
        #expect(output.contains("reconnect"), "\(output)")
    }

    @Test("the writer's session ended by pg_terminate_backend in the middle of a batch: exit 0, every row once")
    func writerTerminated() throws {
        let url = try PostgresServer.database("terminated")
        let database = String(url.split(separator: "/").last!)
        let run = try Launched(job: Self.importJob(url))
        #expect(run.waitFor(url), "the import never showed rows")
        // The writer is the session in a write transaction (one with a transaction id).
        var terminated = 0
        let deadline = Date().addingTimeInterval(60)
        while terminated == 0 && run.process.isRunning && Date() < deadline {
            terminated = Int((try? PostgresServer.psql(url, """
                SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
                WHERE datname = '\(database)' AND pid <> pg_backend_pid() AND backend_xid IS NOT NULL
                """)) ?? "0") ?? 0
        }
        #expect(terminated >= 1, "no writer was caught in a transaction")
        let (status, output) = try run.finish()
        #expect(status == 0, "\(output)")
        try Self.expectEveryRowOnce(url)
        #expect(try run.reconnects() ?? 0 >= 1, "\(output)")
    }

    @Test("the writer's session ended again and again while its COPY streams (every 20 ms for 6 s): the process is never stopped (PostgresNIO's copy precondition), exit 0, every row once")
    func copyEndedAgainAndAgain() throws {
        let url = try PostgresServer.database("copy_ended")
        let database = String(url.split(separator: "/").last!)
        let run = try Launched(job: Self.importJob(url))
        #expect(run.waitFor(url), "the import never showed rows")
        // The writer's session while it runs its COPY (or anything else in a write transaction).
        let until = Date().addingTimeInterval(6)
        var ended = 0, inCopy = 0
        while run.process.isRunning && Date() < until {
            let answer = (try? PostgresServer.psql(url, """
                SELECT count(pg_terminate_backend(pid)) || ' ' || count(*) FILTER (WHERE query LIKE 'COPY%')
                FROM pg_stat_activity
                WHERE datname = '\(database)' AND pid <> pg_backend_pid() AND backend_xid IS NOT NULL
                """)) ?? "0 0"
            let counts = answer.split(separator: " ").compactMap { Int($0) }
            ended += counts.first ?? 0
            inCopy += counts.last ?? 0
            Thread.sleep(forTimeInterval: 0.02)
        }
        let (status, output) = try run.finish()
        // A precondition failure is a signal (SIGILL or SIGTRAP), not an exit.
        #expect(run.process.terminationReason == .exit, "the process was stopped: \(output)")
        #expect(status == 0, "\(output)")
        #expect(ended > 0)
        #expect(inCopy > 0, "no session was ended during a COPY")
        try Self.expectEveryRowOnce(url)
        #expect(try run.reconnects() ?? 0 >= 1, "\(output)")
    }

    @Test("sessions ended again and again during a batch-update: the run reconnects each time, ends ok, every counter bumped once")
    func sessionsEndedAgainAndAgain() throws {
        let url = try PostgresServer.database("ended_again")
        let database = String(url.split(separator: "/").last!)
        try PostgresServer.psql(url, "CREATE TABLE counter (id bigint PRIMARY KEY, n bigint NOT NULL); "
                                + "INSERT INTO counter SELECT i, 0 FROM generate_series(1, 20000) AS i")
        let run = try Launched(job: PostgresRunTests.bumpJob(url, batchSize: 20), feed: false)
        // Once the run is under way (its first batch committed), every session of the run is
        // ended every 50 ms for 5 s (each statement may be the one that meets it).
        _ = run.waitFor(url, "SELECT count(*) FROM counter WHERE n > 0")
        let until = Date().addingTimeInterval(5)
        var ended = 0
        while run.process.isRunning && Date() < until {
            ended += Int((try? PostgresServer.psql(url, "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                                                   + "WHERE datname = '\(database)' AND pid <> pg_backend_pid()")) ?? "0") ?? 0
            Thread.sleep(forTimeInterval: 0.05)
        }
        let (status, output) = try run.finish()
        #expect(status == 0, "\(output)")
        #expect(ended > 0)
        #expect(try PostgresServer.psql(url, "SELECT n || ':' || count(*) FROM counter GROUP BY n") == "1:20000")
        #expect(try run.reconnects(job: "bump") ?? 0 >= 1, "\(output)")
    }

    @Test("the connection dropped after the server committed an import's batch, before its answer arrived: the batch is not written again, exit 0, every row once")
    func commitAnswerLostInImport() throws {
        let url = try PostgresServer.database("unanswered")
        let proxy = try PostgresProxy(to: url)
        defer { proxy.stop() }
        let run = try Launched(job: Self.importJob(proxy.url))
        #expect(run.waitFor(url), "the import never showed rows")
        // The second batch's COMMIT (one with a COPY) from now, on whichever session writes it.
        proxy.dropAfterWriteCommits(2, of: "COPY")
        let (status, output) = try run.finish()
        #expect(proxy.dropped == 1, "no COMMIT's answer was lost: \(output)")
        // Applied twice, the batch's given keys would have met themselves under merge_policy error.
        #expect(status == 0, "\(output)")
        try Self.expectEveryRowOnce(url)
        #expect(try run.reconnects() ?? 0 >= 1, "\(output)")
        #expect(try run.rows("inserted") == Self.rows, "\(output)")
    }

    @Test("the connection dropped after the server committed a batch-update's batch, before its answer arrived: n + 1 applied once to every row")
    func commitAnswerLostInBatchUpdate() throws {
        let url = try PostgresServer.database("unanswered_bump")
        try PostgresServer.psql(url, "CREATE TABLE counter (id bigint PRIMARY KEY, n bigint NOT NULL); "
                                + "INSERT INTO counter SELECT i, 0 FROM generate_series(1, 20000) AS i")
        let proxy = try PostgresProxy(to: url)
        defer { proxy.stop() }
        let run = try Launched(job: PostgresRunTests.bumpJob(proxy.url, batchSize: 20), feed: false)
        _ = run.waitFor(url, "SELECT count(*) FROM counter WHERE n > 0")
        proxy.dropAfterWriteCommits(2)
        let (status, output) = try run.finish()
        #expect(proxy.dropped == 1, "no COMMIT's answer was lost: \(output)")
        #expect(status == 0, "\(output)")
        #expect(try PostgresServer.psql(url, "SELECT n || ':' || count(*) FROM counter GROUP BY n") == "1:20000")
        #expect(try run.rows("updated") == 20000, "\(output)")
    }

    @Test("a server that stays away past reconnect: the job fails saying so (exit 1); --resume later goes on, every row once")
    func pastTheWindow() throws {
        let cluster = try PostgresServer.start()
        defer { try? cluster.stop() }
        let url = try cluster.database("gone")
        let run = try Launched(job: Self.importJob(url, reconnect: "2s"))
        #expect(run.waitFor(url), "the import never showed rows")
        try cluster.halt()
        let (status, output) = try run.finish()
        try cluster.resume()
        #expect(status == 1, "\(output)")
        #expect(output.contains("could not be made again within reconnect (2s)"), "\(output)")
        let resumed = try Batchrun.run(["job.yaml", "--resume"], in: run.folder.url)
        #expect(resumed.status == 0, "\(resumed.stdout)\(resumed.stderr)")
        try Self.expectEveryRowOnce(url)
    }

    @Test("a worker through a server restart: its item's run reconnects, the worker ends the item done (exit 0), every row once")
    func workerThroughARestart() throws {
        let cluster = try PostgresServer.start()
        defer { try? cluster.stop() }
        let url = try cluster.database("worked")
        let worker = try Launched(job: nil, arguments: ["worker", url, "--once", "--trust-submitters"]) { folder in
            try folder.write("item.yaml", Self.importJob(url))
            let submitted = try Batchrun.run(["submit", url, "item.yaml"], in: folder.url)
            #expect(submitted.status == 0, "\(submitted.stdout)\(submitted.stderr)")
        }
        #expect(worker.waitFor(url), "the item's import never showed rows")
        try cluster.halt()
        Thread.sleep(forTimeInterval: 3)
        try cluster.resume()
        let (status, output) = try worker.finish()
        #expect(status == 0, "\(output)")
        try Self.expectEveryRowOnce(url)
        #expect(try PostgresServer.psql(url, "SELECT state FROM _batchrun_queue") == "done", "\(output)")
        let reconnects = try PostgresServer.psql(url, "SELECT report::json -> 'jobs' -> 0 ->> 'reconnects' FROM _batchrun_queue")
        #expect((Int(reconnects) ?? 0) >= 1, "\(output)")
    }

    @Test("a waiting worker through a server restart listens again (its LISTEN session, by its application_name, is back), and runs an item submitted after it")
    func workerListensAgain() throws {
        let cluster = try PostgresServer.start()
        defer { try? cluster.stop() }
        let url = try cluster.database("listening")
        let worker = try Launched(job: nil, feed: false, arguments: ["worker", url + "?application_name=listening_worker", "--trust-submitters"]) { folder in
            try folder.write("item.yaml", """
                version: 1
                store: { sqlite: out.sqlite }
                entities:
                  T: { columns: { id: integer primary key } }
                jobs:
                  load:
                    steps:
                      - insert: { entity: T, rows: [{ id: 1 }] }
                """)
        }
        // The worker's session that has run LISTEN (and nothing since): PostgresNIO's LISTEN "channel".
        let listening = "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'listening_worker' "
            + "AND query ILIKE 'LISTEN%batchrun_queue%'"
        #expect(worker.waitFor(url, listening), "the worker never listened")
        try cluster.halt()
        Thread.sleep(forTimeInterval: 2)
        try cluster.resume()
        // Every session is new after a restart: this one is the worker listening again.
        #expect(worker.waitFor(url, listening), "the worker did not listen again after the restart")
        let submitted = try Batchrun.run(["submit", url, "item.yaml"], in: worker.folder.url)
        #expect(submitted.status == 0, "\(submitted.stdout)\(submitted.stderr)")
        #expect(worker.waitFor(url, "SELECT count(*) FROM _batchrun_queue WHERE state = 'done'"), "the item never ran")
        kill(worker.process.processIdentifier, SIGTERM)
        let (_, output) = try worker.finish()
        #expect(output.contains("done "), "\(output)")
    }

    @Test("reconnect: on an SQLite store is an error of the file, at the key")
    func reconnectNeedsAServer() throws {
        let folder = try TemporaryFolder()
        try folder.write("job.yaml", """
            version: 1
            store: { sqlite: s.sqlite, reconnect: 30s }
            entities:
              T: { columns: { id: integer primary key } }
            jobs:
              a:
                steps:
                  - fetch: { entity: T }
            """)
        let checked = try Batchrun.run(["check", "job.yaml"], in: folder.url)
        #expect(checked.status == 2)
        #expect(checked.stderr.contains("job.yaml:2:"), "\(checked.stderr)")
        #expect(checked.stderr.contains("reconnect is for a store on a server"), "\(checked.stderr)")
    }
}
