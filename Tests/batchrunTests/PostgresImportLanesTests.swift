import Foundation
import Testing
import TestSupport

/// An import over several sessions at once (issue 51): batches COPYed on `parallel:` sessions,
/// committed in feed order, so a run killed while several are mid-batch resumes with every row
/// once, and a later batch that reached a key first does not change what an earlier one wrote.
@Suite("PostgreSQL: an import over several sessions")
struct PostgresImportLanesTests {
    typealias Launched = PostgresReconnectTests.Launched

    /// `PostgresReconnectTests.importJob` in batches of `batchSize`, written over `parallel` sessions.
    static func importJob(_ url: String, parallel: Int, batchSize: Int = 10000) -> String {
        PostgresReconnectTests.importJob(url)
            .replacingOccurrences(of: "batch_size: 5000", with: "batch_size: \(batchSize)")
            .replacingOccurrences(of: "from: feed.csv }", with: "from: feed.csv, parallel: \(parallel) }")
    }

    /// A job file on `url` whose `entities` each have the feed's columns (`id`, `minutes`), and
    /// `jobs` (the lines under `jobs:`, indented two spaces).
    static func job(_ url: String, entities: [String], jobs: String) -> String {
        """
        version: 1
        store: { postgres: "\(url)" }
        entities:
        \(entities.map { "  \($0): { columns: { id: integer primary key, minutes: integer not null } }" }.joined(separator: "\n"))
        jobs:
        \(jobs)
        """
    }

    /// The most sessions of `url`'s database (other than the asking one) seen in a write
    /// transaction at once, looked at every 2 ms for up to `seconds`, or until there were
    /// `enough`. Watched inside the server: a psql started for each look (tens of ms on a busy
    /// machine) missed the moments, and a whole import ran between two of them.
    static func mostWriting(_ url: String, enough: Int, seconds: Double) throws -> Int {
        let sql = """
            CREATE FUNCTION pg_temp.most_writing(enough int, seconds float8) RETURNS int LANGUAGE plpgsql AS $$
            DECLARE most int := 0; now_writing int; until timestamptz := clock_timestamp() + seconds * interval '1 second';
            BEGIN
              WHILE most < enough AND clock_timestamp() < until LOOP
                PERFORM pg_stat_clear_snapshot();
                SELECT count(*) INTO now_writing FROM pg_stat_activity
                WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_xid IS NOT NULL;
                most := greatest(most, now_writing);
                PERFORM pg_sleep(0.002);
              END LOOP;
              RETURN most;
            END $$;
            SELECT pg_temp.most_writing(\(enough), \(seconds));
            """
        return Int(try PostgresServer.psql(url, sql)) ?? 0
    }

    @Test("parallel: 4, killed with SIGKILL twice while several sessions were mid-batch, then resumed: every row once, the rows counted once over the attempts")
    func killedMidBatchAndResumed() throws {
        let url = try PostgresServer.database("lanes_killed")
        // Each batch holds its transaction a second longer: the kill always finds several
        // sessions mid-batch, and the killed run's sessions outlive it by up to a second (the
        // server ends a session whose client died only once its statement ends). So a `--resume`
        // may meet its first batches' keys locked by them (its lanes wait 200 ms, then give the
        // batches to the writer; `firstBatchesLockedByAnotherSession` makes it certain), and must
        // still write over several sessions after.
        try PostgresServer.slowInserts(url, table: "item", seconds: 1)
        let first = try Launched(job: Self.importJob(url, parallel: 4), arguments: ["job.yaml"])
        let folder = first.folder
        var process = first.process
        var storedBefore = 0   // rows committed when the last attempt began
        for attempt in 1...2 {
            // Killed at a moment when at least two sessions hold a batch's transaction open.
            let deadline = Date().addingTimeInterval(120)
            var most = 0
            while process.isRunning && Date() < deadline && most < 2 {
                most = max(most, try Self.mostWriting(url, enough: 2, seconds: 1))
            }
            #expect(most >= 2, "attempt \(attempt): never two sessions mid-batch at once")
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let stored = Int(try PostgresServer.psql(url, "SELECT count(*) FROM item")) ?? -1
            #expect(stored < PostgresReconnectTests.rows, "attempt \(attempt): the import ended before it was killed")
            storedBefore = stored
            let log = try FileHandle(forWritingTo: URL(fileURLWithPath: folder.write("run.log", "")))
            process = try Batchrun.start(["job.yaml", "--resume", "--report", "r.json"], in: folder, output: log)
        }
        process.waitUntilExit()
        let output = try String(contentsOfFile: folder.path("run.log"), encoding: .utf8)
        #expect(process.terminationStatus == 0, "\(output)")
        #expect(try PostgresServer.psql(url, "SELECT count(*) FROM pg_trigger WHERE tgname = 'slow_batch'") == "1")
        try PostgresReconnectTests.expectEveryRowOnce(url)
        // The last attempt's report counts what it inserted, the rest; the step's checkpoint, every row once.
        let report = try folder.json("r.json")
        let rows = (report["jobs"] as? [[String: Any]])?.first?["rows"] as? [String: Any]
        #expect(rows?["inserted"] as? Int == PostgresReconnectTests.rows - storedBefore, "\(output)")
        #expect(try PostgresServer.psql(url, "SELECT inserted FROM _batchrun_progress WHERE job = 'load' ORDER BY run_id DESC LIMIT 1")
                == String(PostgresReconnectTests.rows), "\(output)")
    }

    @Test("a key in two batches in flight at once, under object trump: the later row wins, as written one batch at a time, whichever session reached the key first")
    func sameKeyInTwoBatchesInFlight() throws {
        let url = try PostgresServer.database("lanes_same_key")
        // Batches of 100 rows: key k is in batch k / 100, and again (its minutes + 1000) in the
        // batch after it, which is in flight at the same time on another session.
        var feed = "id,minutes\n"
        for batch in 0..<60 {
            for row in 0..<100 {
                if row < 50 {
                    let id = batch * 100 + row + 1
                    feed += "\(id),\(id % 600)\n"
                } else if batch > 0 {
                    let id = (batch - 1) * 100 + (row - 50) + 1
                    feed += "\(id),\(id % 600 + 1000)\n"
                } else {
                    feed += "\(100_000 + row),0\n"
                }
            }
        }
        let job = Self.importJob(url, parallel: 4, batchSize: 100)
            .replacingOccurrences(of: "batch_size:", with: "merge_policy: object-trump\n    batch_size:")
            .replacingOccurrences(of: "{ postgres: \"\(url)\" }", with: "{ postgres: \"\(url)\", busy_timeout: 1s }")
        let run = try Launched(job: job, feed: false) { folder in try folder.write("feed.csv", feed) }
        let (status, output) = try run.finish()
        #expect(status == 0, "\(output)")
        // Keys 1-50 of each batch but the last were written twice, the second time with +1000.
        #expect(try PostgresServer.psql(url, "SELECT count(*) FROM item WHERE id < 100000") == "3000")
        #expect(try PostgresServer.psql(url, """
            SELECT count(*) || coalesce(' ' || string_agg(id || '=' || minutes, ' ' ORDER BY id), '') FROM item
            WHERE id < 100000 AND minutes <> id % 600 + CASE WHEN id <= 5850 THEN 1000 ELSE 0 END
            """) == "0", "\(output)")
        #expect(try run.rows("inserted") == 3050 && run.rows("updated") == 2950, "\(output)")
    }

    @Test("two imports at once on one store, each over 2 sessions, batches of 100: both end (no session shared while a batch waits for its turn), every row once")
    func twoImportsAtOnce() throws {
        let url = try PostgresServer.database("lanes_two_imports")
        let job = Self.job(url, entities: ["Item", "Other"], jobs: """
              first:
                batch_size: 100
                steps: [{ insert: { entity: Item, from: feed.csv, parallel: 2 } }]
              second:
                batch_size: 100
                steps: [{ insert: { entity: Other, from: feed.csv, parallel: 2 } }]
            """)
        let run = try Launched(job: job, arguments: ["job.yaml", "--jobs", "2", "--report", "r.json"])
        let deadline = Date().addingTimeInterval(240)
        while run.process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        #expect(!run.process.isRunning, "the two imports did not end within 240 s")
        let (status, output) = try run.finish()
        #expect(status == 0, "\(output)")
        try PostgresReconnectTests.expectEveryRowOnce(url)
        #expect(try PostgresServer.psql(url, "SELECT count(*) || ' ' || count(DISTINCT id) FROM other") == "400000 400000")
    }

    @Test("keys given over 4 sessions, then rows whose keys the server assigns: the key's sequence is past every key given (it moved forward only, in the batches' turns)")
    func sequencePastGivenKeys() throws {
        let url = try PostgresServer.database("lanes_sequence")
        let job = Self.job(url, entities: ["Item"], jobs: """
              load:
                batch_size: 500
                steps:
                  - insert: { entity: Item, from: feed.csv, parallel: 4 }
                  - insert: { entity: Item, rows: [{ minutes: 1 }, { minutes: 2 }, { minutes: 3 }] }
            """)
        let run = try Launched(job: job, arguments: ["job.yaml", "--report", "r.json"])
        let (status, output) = try run.finish()
        #expect(status == 0, "\(output)")
        let rows = PostgresReconnectTests.rows
        #expect(try PostgresServer.psql(url, "SELECT string_agg(id::text, ',' ORDER BY id) FROM item WHERE id > \(rows)")
                == "\(rows + 1),\(rows + 2),\(rows + 3)", "\(output)")
    }

    @Test("every lane's first batch meets keys another session holds (a killed run's, outliving it): the batches go to the writer once, and the import goes on over several sessions")
    func firstBatchesLockedByAnotherSession() throws {
        let url = try PostgresServer.database("lanes_locked")
        try PostgresServer.slowInserts(url, table: "item", seconds: 0.2)
        try PostgresServer.psql(url, "CREATE TABLE item (id integer PRIMARY KEY, minutes integer NOT NULL)")
        // Another session holds the keys of the first four batches for 5 s, uncommitted.
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "\(PostgresServer.binaries)/psql")
        holder.arguments = [url, "-X", "-q", "-c", "BEGIN; INSERT INTO item SELECT g, 0 FROM generate_series(1, 40000) g; SELECT pg_sleep(5); ROLLBACK"]
        holder.standardOutput = FileHandle.nullDevice
        try holder.run()
        defer { if holder.isRunning { holder.terminate() } }
        let deadline = Date().addingTimeInterval(60)
        while try PostgresServer.psql(url, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND backend_xid IS NOT NULL") != "1" {
            #expect(Date() < deadline && holder.isRunning, "the holder never held the keys")
            if Date() >= deadline || !holder.isRunning { return }
            Thread.sleep(forTimeInterval: 0.02)
        }
        let job = Self.importJob(url, parallel: 4).replacingOccurrences(of: "{ postgres: \"\(url)\" }", with: "{ postgres: \"\(url)\", busy_timeout: 30s }")
        let run = try Launched(job: job, arguments: ["job.yaml", "--report", "r.json"])
        // The run's sessions wait for the holder's keys (else this test tests nothing).
        var waited = false
        while !waited && holder.isRunning {
            waited = try PostgresServer.psql(url, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'") != "0"
            Thread.sleep(forTimeInterval: 0.02)
        }
        #expect(waited, "the run never waited for the holder's keys")
        holder.waitUntilExit()
        // Once the holder is gone: batches on several sessions at once (not the writer alone).
        let most = try Self.mostWriting(url, enough: 2, seconds: 60)
        let (status, output) = try run.finish()
        #expect(status == 0, "\(output)")
        #expect(most >= 2, "after the locked batches, one session at a time: the import gave up its lanes")
        try PostgresReconnectTests.expectEveryRowOnce(url)
        #expect(try run.rows("inserted") == PostgresReconnectTests.rows, "\(output)")
    }
}
