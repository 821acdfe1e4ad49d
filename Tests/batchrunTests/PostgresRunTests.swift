import Foundation
import GRDB
import Testing
import TestSupport

/// The binary against a real PostgreSQL server (a throwaway cluster this test process starts):
/// the example job files leave what they leave on SQLite, a run killed at random moments and
/// resumed equals one uninterrupted run, and two batchrun processes updating the same rows
/// each apply their change once.
@Suite("PostgreSQL end to end")
struct PostgresRunTests {
    /// Runs `file` of a fresh copy of jobs/ and examples/ on `store` (an SQLite path or a URL),
    /// one job at a time; the workspace and the JSON report.
    func run(_ file: String, store: String) throws -> (TemporaryFolder, [String: Any]) {
        let folder = try TemporaryFolder()
        try folder.copyFromPackage("jobs")
        try folder.copyFromPackage("examples")
        let result = try Batchrun.run([file, "--store", store, "--jobs", "1", "--report", "out/report.json"], in: folder.url)
        #expect(result.status == 0, "\(file) on \(store): \(result.stdout)\(result.stderr)")
        return (folder, try folder.json("out/report.json"))
    }

    /// Each job's status, rows and conflicts, as the report gives them.
    func outcome(_ report: [String: Any]) -> [String] {
        (report["jobs"] as? [[String: Any]] ?? []).map { job in
            let rows = (job["rows"] as? [String: Int] ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            return "\(job["name"] ?? "") \(job["status"] ?? "") \(rows.joined(separator: " ")) conflicts=\(job["conflicts"] ?? 0)"
        }
    }

    /// A CSV file's header and its last column's values, sorted.
    func columns(of path: String) throws -> (header: String, last: [String]) {
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
        return (lines.first ?? "", lines.dropFirst().map { String($0.split(separator: ",").last ?? "") }.sorted())
    }

    @Test("nightly.yaml and import_feeds.yaml on PostgreSQL: the same jobs' rows, conflicts and report files as on SQLite")
    func examplesAsOnSQLite() throws {
        for (file, outputs) in [("jobs/nightly.yaml", ["reports/longest.csv"]), ("examples/import_feeds.yaml", [])] {
            let (sqlite, sqliteReport) = try run(file, store: "store.sqlite")
            let url = try PostgresServer.database("examples")
            let (postgres, postgresReport) = try run(file, store: url)
            #expect(outcome(postgresReport) == outcome(sqliteReport), "\(file)")
            #expect(!outcome(postgresReport).isEmpty)
            #expect(postgresReport["store"] as? String == url)
            // The same header and values; rows with equal sort keys may come in another order
            // (and tie at the limit), so each column's values are compared as a sorted list.
            for output in outputs {
                let expected = try columns(of: sqlite.path(output)), written = try columns(of: postgres.path(output))
                #expect(written.header == expected.header, "\(file): \(output)")
                #expect(written.last == expected.last, "\(file): \(output)")
                #expect(expected.last.count > 10)
            }
        }
        // What the nightly job leaves, read by psql: the feed's sessions since 2020, tables folded to lowercase.
        let url = try PostgresServer.database("nightly")
        _ = try run("jobs/nightly.yaml", store: url)
        #expect(try PostgresServer.psql(url, "SELECT count(*) FROM session WHERE started_at < '2020-01-01'") == "0")
        #expect(try PostgresServer.psql(url, "SELECT count(*) FROM session WHERE status = 'stale'") != "0")
        #expect(try PostgresServer.psql(url, "SELECT string_agg(tablename, ',' ORDER BY tablename) FROM pg_tables WHERE schemaname = 'public'")
                == "_batchrun_jobs,_batchrun_parts,_batchrun_progress,_batchrun_runs,session")
    }

    /// Counters, pairs and a marker in `url`, made by psql, and the resume tests' job file
    /// (relative updates, a delete, a fetch and a job that uses its output).
    static func prepareCounters(_ folder: TemporaryFolder, url: String, rows: Int) throws {
        try PostgresServer.psql(url, """
            CREATE TABLE counter (id bigint PRIMARY KEY, n bigint NOT NULL, grp text NOT NULL);
            CREATE TABLE pair (a bigint NOT NULL, b text NOT NULL, n bigint NOT NULL, PRIMARY KEY (a, b));
            CREATE TABLE marker (id bigint PRIMARY KEY, total bigint);
            INSERT INTO marker VALUES (1, NULL);
            INSERT INTO counter SELECT i, 0, 'g' || (i % 5) FROM generate_series(1, \(rows)) AS i;
            INSERT INTO pair SELECT a, b, 0 FROM generate_series(1, 60) AS a, unnest(ARRAY['x', 'y', 'z']) AS b;
            """)
        try folder.write("job.yaml", ResumeTests.jobFile(store: "{ postgres: \"\(url)\" }"))
    }

    static func contents(_ url: String) throws -> String {
        try ["counter ORDER BY id", "pair ORDER BY a, b", "marker ORDER BY id"].map { from in
            try PostgresServer.psql(url, "SELECT string_agg(t::text, ';') FROM (SELECT * FROM \(from)) AS t")
        }.joined(separator: "\n")
    }

    @Test("killed (SIGKILL and SIGINT) at random moments and resumed until ok: the database equals one uninterrupted run's")
    func killedAndResumed() throws {
        let rows = 3_000
        let reference = try TemporaryFolder(), folder = try TemporaryFolder()
        let referenceURL = try PostgresServer.database("reference"), url = try PostgresServer.database("resumed")
        try Self.prepareCounters(reference, url: referenceURL, rows: rows)
        try Self.prepareCounters(folder, url: url, rows: rows)
        let started = Date()
        let uninterrupted = try Batchrun.run(["job.yaml", "--quiet", "--report", "r.json"], in: reference.url)
        let wholeRun = Date().timeIntervalSince(started)
        #expect(uninterrupted.status == 0, "\(uninterrupted.stdout)\(uninterrupted.stderr)")
        // The reference is right on its own: every counter bumped once (g1 by 11), every seventh deleted.
        let expectedTotal = (1...rows).filter { $0 % 7 != 0 }.map { $0 % 5 == 1 ? 11 : 1 }.reduce(0, +)
        #expect(try PostgresServer.psql(referenceURL, "SELECT total FROM marker") == String(expectedTotal))

        var runs = InterruptedRuns(folder: folder, arguments: ["job.yaml", "--quiet", "--report", "r.json"], interruptions: 8,
                                   wholeRun: wholeRun)
        runs.postgres = url
        let (interruptions, committed, endedOK) = try runs.run()
        #expect(endedOK, "the run never ended ok")
        #expect(interruptions >= 6)
        #expect(committed >= 3, "only \(committed) of the killed attempts had committed rows")
        #expect(try Self.contents(url) == Self.contents(referenceURL))
        let expected = try reference.json("r.json"), final = try folder.json("r.json")
        let expectedRows = (expected["jobs"] as! [[String: Any]]).map { $0["rows"] as! [String: Int] }
        #expect((final["jobs"] as! [[String: Any]]).map { $0["rows_total"] as! [String: Int] } == expectedRows)
    }

    /// A job file whose one job adds 1 to every counter's `n`, in batches of `batchSize`.
    static func bumpJob(_ url: String, batchSize: Int, mergePolicy: String = "error") -> String {
        """
        version: 1
        store: { postgres: "\(url)" }
        entities:
          Counter: { columns: { id: integer primary key, n: integer not null } }
        jobs:
          bump:
            merge_policy: \(mergePolicy)
            batch_size: \(batchSize)
            steps:
              - batch-update: { entity: Counter, set: { n: "n + 1" } }
        """
    }

    @Test("two batchrun processes bump the same counters at once under recompute: every counter ends at 2")
    func twoProcesses() throws {
        let url = try PostgresServer.database("two")
        let folders = [try TemporaryFolder(), try TemporaryFolder()]
        try PostgresServer.psql(url, "CREATE TABLE counter (id bigint PRIMARY KEY, n bigint NOT NULL); "
                                + "INSERT INTO counter SELECT i, 0 FROM generate_series(1, 2000) AS i")
        for folder in folders {
            try folder.write("job.yaml", Self.bumpJob(url, batchSize: 50, mergePolicy: "recompute"))
        }
        let logs = try folders.map { try FileHandle(forWritingTo: URL(fileURLWithPath: $0.write("run.log", ""))) }
        let results = try zip(folders, logs).map { try Batchrun.start(["job.yaml", "--quiet", "--report", "r.json"], in: $0, output: $1) }
        for process in results { process.waitUntilExit() }
        let output = try folders.map { try String(contentsOfFile: $0.path("run.log"), encoding: .utf8) }.joined(separator: "\n---\n")
        #expect(results.map(\.terminationStatus) == [0, 0], "\(output)")
        #expect(try PostgresServer.psql(url, "SELECT n || ':' || count(*) FROM counter GROUP BY n") == "2:2000")
        let conflicts = try folders.map { try $0.json("r.json")["conflicts"] as? [[String: Any]] ?? [] }.flatMap { $0 }
        for conflict in conflicts { #expect(conflict["outcome"] as? String == "recomputed") }
    }

    @Test("a batch the server rolls back for another's sake (deadlock, serialization failure) is tried again without retries set; one that always is fails the job after 10",
          arguments: ["deadlock_detected", "serialization_failure"])
    func rolledBackForAnother(_ condition: String) throws {
        let url = try PostgresServer.database("again")
        // The server raises the condition itself, from a trigger, on the first three updates
        // (a sequence counts them: it is not rolled back with the transaction), or always.
        try PostgresServer.psql(url, """
            CREATE TABLE counter (id bigint PRIMARY KEY, n bigint NOT NULL);
            INSERT INTO counter SELECT i, 0 FROM generate_series(1, 100) AS i;
            CREATE SEQUENCE failures;
            CREATE TABLE settings (fail_until bigint NOT NULL);
            INSERT INTO settings VALUES (3);
            CREATE FUNCTION fail_first() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
              IF nextval('failures') <= (SELECT fail_until FROM settings) THEN
                RAISE EXCEPTION 'raised by the test' USING ERRCODE = '\(condition)';
              END IF;
              RETURN NEW;
            END $$;
            CREATE TRIGGER fail_first BEFORE UPDATE ON counter FOR EACH STATEMENT EXECUTE FUNCTION fail_first();
            """)
        let folder = try TemporaryFolder()
        try folder.write("job.yaml", Self.bumpJob(url, batchSize: 40))
        let run = try Batchrun.run(["job.yaml", "--report", "r.json"], in: folder.url)
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        #expect(try PostgresServer.psql(url, "SELECT n || ':' || count(*) FROM counter GROUP BY n") == "1:100")
        let step = try #require(((folder.json("r.json")["jobs"] as? [[String: Any]])?.first?["steps"] as? [[String: Any]])?.first)
        #expect(step["retries"] as? Int == 3)

        try PostgresServer.psql(url, "UPDATE settings SET fail_until = 1000000")
        let failing = try Batchrun.run(["job.yaml", "--report", "r.json"], in: folder.url)
        #expect(failing.status == 1, "\(failing.stdout)\(failing.stderr)")
        #expect((failing.stdout + failing.stderr).contains("raised by the test"), "\(failing.stdout)\(failing.stderr)")
        #expect(try PostgresServer.psql(url, "SELECT n || ':' || count(*) FROM counter GROUP BY n") == "1:100")
        let failed = try #require(((folder.json("r.json")["jobs"] as? [[String: Any]])?.first?["steps"] as? [[String: Any]])?.first)
        #expect(failed["retries"] as? Int == 10)
    }

    @Test("a .pgpass the group or others may read is ignored with a warning that says why and what to do, as libpq does")
    func passFileWarning() throws {
        let url = try PostgresServer.database("pgpass")
        let folder = try TemporaryFolder()
        let pgpass = try folder.write("pgpass", "*:*:*:*:not-needed\n")
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: pgpass)
        try folder.write("job.yaml", PostgresQueueTests.tableJob(url, steps: "{ fetch: { entity: T } }"))
        let checked = try Batchrun.run(["check", "job.yaml"], in: folder.url, environment: ["PGPASSFILE": pgpass])
        #expect(checked.status == 0, "\(checked.stdout)\(checked.stderr)")
        #expect(checked.stderr.contains("warning: password file \"\(pgpass)\" has group or world access"), "\(checked.stderr)")
        #expect(checked.stderr.contains("chmod 0600"), "\(checked.stderr)")
    }

    @Test("a session the server ends while check prepares an expression leaves the expressions unchecked, said so: not a mistake in the file (exit 0, not 2)")
    func checkSessionEnded() throws {
        let url = try PostgresServer.database("check_ended")
        // IMMUTABLE with no arguments: the planner runs it while preparing, and it ends its own session.
        try PostgresServer.psql(url, """
            CREATE FUNCTION ends_session() RETURNS int IMMUTABLE LANGUAGE plpgsql AS $$
            BEGIN PERFORM pg_terminate_backend(pg_backend_pid()); RETURN 1; END $$
            """)
        let folder = try TemporaryFolder()
        try folder.write("job.yaml", """
            version: 1
            store: { postgres: "\(url)" }
            entities:
              T: { columns: { id: integer primary key, v: text } }
            jobs:
              a:
                steps:
                  - fetch: { entity: T, where: "id = ends_session()" }
                  - fetch: { entity: T, where: "v = :wanted", params: { wanted: x } }
            """)
        let checked = try Batchrun.run(["check", "job.yaml"], in: folder.url)
        #expect(checked.status == 0, "\(checked.stdout)\(checked.stderr)")
        #expect(checked.stdout.contains("expressions were not checked: terminating connection due to administrator command"),
                "\(checked.stdout)\(checked.stderr)")
        // What needs no server is still checked after the session ended: a placeholder with no value.
        try folder.write("job.yaml", String(contentsOfFile: folder.path("job.yaml"), encoding: .utf8)
            .replacingOccurrences(of: "v = :wanted\"", with: "v = :missing\""))
        let missing = try Batchrun.run(["check", "job.yaml"], in: folder.url)
        #expect(missing.status == 2, "\(missing.stdout)\(missing.stderr)")
        #expect((missing.stdout + missing.stderr).contains("placeholder :missing has no value"), "\(missing.stdout)\(missing.stderr)")
    }

    @Test("check prepares expressions on the server in PostgreSQL's dialect; undeclared tables, writes and functions that reach outside are refused with a caret")
    func checkOnServer() throws {
        let url = try PostgresServer.database("check")
        try PostgresServer.psql(url, "CREATE TABLE secret (id bigint)")
        let folder = try TemporaryFolder()
        let entities = """
            entities:
              Session:
                columns: { id: integer primary key, user: text not null, started_at: datetime not null, duration: real }
              Goal: { columns: { user: text primary key, minutes: integer not null } }
            """
        try folder.write("good.yaml", """
            version: 1
            store: { postgres: "\(url)" }
            \(entities)
            jobs:
              stats:
                steps:
                  - fetch:
                      entity: Session
                      select: { month: "to_char(started_at, 'YYYY-MM')", minutes: "round(sum(duration)::numeric, 1)", goals: "(SELECT count(*) FROM Goal)" }
                      where: "started_at >= now() - interval '30 days' AND user ILIKE :who"
                      group_by: ["to_char(started_at, 'YYYY-MM')"]
                      params: { who: "a%" }
            """)
        let good = try Batchrun.run(["check", "good.yaml"], in: folder.url)
        #expect(good.status == 0, "\(good.stdout)\(good.stderr)")
        #expect(!good.stdout.contains("not checked"))

        try folder.write("bad.yaml", """
            version: 1
            store: { postgres: "\(url)" }
            \(entities)
            jobs:
              a:
                steps:
                  - fetch: { entity: Session, where: "stauts = 'open'" }
                  - fetch: { entity: Session, where: "id IN (SELECT oid FROM pg_class)" }
                  - fetch: { entity: Session, select: { x: "pg_read_file('/etc/passwd')" } }
                  - fetch: { entity: Session, where: "id IN (SELECT id FROM secret)" }
                  - fetch: { entity: Session, where: "substr(started_at, 1, 4) = '2026'" }
                  - batch-update: { entity: Session, where: "id = :id", set: { duration: "dblink_exec('x')" } }
            """)
        let bad = try Batchrun.run(["check", "bad.yaml"], in: folder.url)
        #expect(bad.status == 2)
        let errors = bad.stderr.split(separator: "\n").filter { $0.contains(": error: ") }.map(String.init)
        #expect(errors == [
            "bad.yaml:10:43: error: column \"stauts\" does not exist",
            "bad.yaml:11:66: error: table pg_catalog.pg_class is not declared in this job file; expressions may read declared tables only",
            "bad.yaml:12:49: error: function pg_read_file reaches outside the database and is not allowed in expressions",
            "bad.yaml:13:65: error: table public.secret is not declared in this job file; expressions may read declared tables only",
            "bad.yaml:14:43: error: function substr(timestamp with time zone, integer, integer) does not exist",
            "bad.yaml:15:49: error: placeholder :id has no value; set it in the step's params, the file's params, or with --param id=VALUE",
            "bad.yaml:15:79: error: function dblink_exec reaches outside the database and is not allowed in expressions",
        ], "\(bad.stderr)")
        // The server's tables are as they were: the check created and changed nothing.
        #expect(try PostgresServer.psql(url, "SELECT string_agg(tablename, ',') FROM pg_tables WHERE schemaname = 'public'") == "secret")

        // No server to reach: everything else is checked, and check says expressions were not.
        try folder.write("away.yaml", try String(contentsOfFile: folder.path("good.yaml"), encoding: .utf8)
            .replacingOccurrences(of: url, with: "postgresql://postgres@127.0.0.1:1/none"))
        let away = try Batchrun.run(["check", "away.yaml"], in: folder.url)
        #expect(away.status == 0, "\(away.stderr)")
        #expect(away.stdout.contains("expressions were not checked: cannot open store postgresql://postgres@127.0.0.1:1/none"), "\(away.stdout)")
        try folder.write("away-bad.yaml", try String(contentsOfFile: folder.path("away.yaml"), encoding: .utf8)
            .replacingOccurrences(of: "batch_size", with: "x").replacingOccurrences(of: "group_by:", with: "group_bye:"))
        let awayBad = try Batchrun.run(["check", "away-bad.yaml"], in: folder.url)
        #expect(awayBad.status == 2)
        #expect(awayBad.stderr.contains("group_bye"), "\(awayBad.stderr)")
    }

    @Test("an import keeps every value intact (escapes, NULLs, booleans, datetimes), the keys the server assigns rise in feed order, and a re-import resolves taken keys (also when the sequence steps by 3)")
    func importValuesKeysAndReimport() throws {
        let url = try PostgresServer.database("copy")
        let folder = try TemporaryFolder()
        var feed = ""
        for index in 1...600 {
            let note = index % 3 == 0 ? "null" : "\"tab\\there, line\\nbreak, back\\\\slash \\r #\(index)\""
            feed += "{\"name\": \"n\(index)\", \"note\": \(note), \"ok\": \(index % 2 == 0), \"at\": \"2026-01-02T03:04:05Z\", \"amount\": \(Double(index) / 4)}\n"
        }
        try folder.write("feed.ndjson", feed)
        try folder.write("job.yaml", """
            version: 1
            store: { postgres: "\(url)" }
            entities:
              Thing:
                columns: { id: integer primary key, name: text not null unique, note: text, ok: boolean, at: datetime, amount: real }
            jobs:
              load:
                merge_policy: object-trump
                batch_size: 250
                steps: [{ insert: { entity: Thing, from: feed.ndjson } }]
            """)
        let first = try Batchrun.run(["job.yaml", "--quiet", "--report", "r.json"], in: folder.url)
        #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
        #expect(try PostgresServer.psql(url, "SELECT count(*) || ' ' || min(id) || ' ' || max(id) || ' ' || count(DISTINCT id) FROM thing") == "600 1 600 600")
        // Keys rise in feed order (a batch's keys are drawn while the one before loads) and none is left unused.
        #expect(try PostgresServer.psql(url, "SELECT count(*) FROM thing WHERE id <> substr(name, 2)::int") == "0")
        #expect(try PostgresServer.psql(url, "SELECT last_value FROM thing_id_seq") == "600")
        #expect(try PostgresServer.psql(url, "SELECT note FROM thing WHERE name = 'n1'") == "tab\there, line\nbreak, back\\slash \r #1")
        #expect(try PostgresServer.psql(url, "SELECT count(*) FROM thing WHERE note IS NULL") == "200")
        #expect(try PostgresServer.psql(url, "SELECT ok || ' ' || amount || ' ' || to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') FROM thing WHERE name = 'n2'")
                == "true 0.5 2026-01-02 03:04:05")
        // The same feed again: every name is taken (a unique column), so every row is a conflict, resolved as ours.
        try PostgresServer.psql(url, "UPDATE thing SET amount = -1")
        let second = try Batchrun.run(["job.yaml", "--quiet", "--report", "r2.json"], in: folder.url)
        #expect(second.status == 0, "\(second.stdout)\(second.stderr)")
        #expect(try PostgresServer.psql(url, "SELECT count(*) || ' ' || sum(amount * 4)::bigint FROM thing") == "600 \((1...600).reduce(0, +))")
        let conflicts = try folder.json("r2.json")["conflicts"] as? [[String: Any]] ?? []
        #expect(conflicts.count == 600)
        // Keys drawn from a sequence that steps by 3 are not consecutive: each row gets one the server drew.
        try PostgresServer.psql(url, "ALTER TABLE thing ALTER COLUMN id SET INCREMENT BY 3")
        try folder.write("more.ndjson", (1...300).map { "{\"name\": \"m\($0)\"}" }.joined(separator: "\n"))
        try folder.write("more.yaml", try String(contentsOfFile: folder.path("job.yaml"), encoding: .utf8).replacingOccurrences(of: "feed.ndjson", with: "more.ndjson"))
        let third = try Batchrun.run(["more.yaml", "--quiet"], in: folder.url)
        #expect(third.status == 0, "\(third.stdout)\(third.stderr)")
        #expect(try PostgresServer.psql(url, "SELECT count(*) || ' ' || count(DISTINCT id) || ' ' || (max(id) - min(id)) FROM thing WHERE name LIKE 'm%'")
                == "300 300 \(3 * 299)")
    }

    @Test("an object-trump re-import giving NULL to a NOT NULL column with a default writes the default (batch and row-by-row conflicts), on PostgreSQL and SQLite alike, and the conflict records say so")
    func objectTrumpNullTakesTheDefault() throws {
        let url = try PostgresServer.database("trump_default")
        for store in ["{ postgres: \"\(url)\" }", "{ sqlite: s.sqlite }"] {
            let folder = try TemporaryFolder()
            // 300 rows (the batch path of conflicts), then a one-row batch (the row-by-row path).
            try folder.write("first.csv", "id,status,note\n" + (1...301).map { "\($0),done,n\($0)" }.joined(separator: "\n") + "\n")
            try folder.write("again.csv", "id,status,note\n" + (1...300).map { "\($0),,again" }.joined(separator: "\n") + "\n")
            try folder.write("one.csv", "id,status,note\n301,,again\n")
            func job(_ feed: String) -> String {
                """
                version: 1
                store: \(store)
                entities:
                  Task: { columns: { id: integer primary key, status: text not null default 'open', note: text } }
                jobs:
                  load:
                    merge_policy: object-trump
                    batch_size: 1000
                    steps: [{ insert: { entity: Task, from: \(feed) } }]
                """
            }
            try folder.write("first.yaml", job("first.csv"))
            try folder.write("again.yaml", job("again.csv"))
            try folder.write("one.yaml", job("one.csv"))
            let first = try Batchrun.run(["first.yaml", "--quiet"], in: folder.url)
            #expect(first.status == 0, "\(store): \(first.stdout)\(first.stderr)")
            let again = try Batchrun.run(["again.yaml", "--quiet", "--report", "r.json"], in: folder.url)
            #expect(again.status == 0, "\(store): \(again.stdout)\(again.stderr)")
            let one = try Batchrun.run(["one.yaml", "--quiet", "--report", "r1.json"], in: folder.url)
            #expect(one.status == 0, "\(store): \(one.stdout)\(one.stderr)")
            let summary = "SELECT status || ' ' || note || ' ' || count(*) FROM task GROUP BY status, note"
            let stored = store.contains("postgres")
                ? try PostgresServer.psql(url, summary)
                : try StoreInspector(path: folder.path("s.sqlite")).strings(summary).joined(separator: "\n")
            #expect(stored == "open again 301", "\(store)")
            for report in ["r.json", "r1.json"] {
                let conflicts = try folder.json(report)["conflicts"] as? [[String: Any]] ?? []
                let status = conflicts.first.flatMap { ($0["properties"] as? [[String: Any]])?.first { $0["name"] as? String == "status" } }
                #expect(status?["store"] as? String == "done" && status?["ours"] is NSNull && status?["resolved"] as? String == "open",
                        "\(store) \(report): \(String(describing: status))")
            }
            if store.contains("postgres") { try PostgresServer.psql(url, "DROP TABLE task; DROP TABLE _batchrun_runs, _batchrun_jobs, _batchrun_progress") }
        }
    }

    @Test("a lock another session holds past busy_timeout fails the batch as busy (exit 1), saying so")
    func lockHeldByAnotherSession() throws {
        let url = try PostgresServer.database("locked")
        let folder = try TemporaryFolder()
        try PostgresServer.psql(url, "CREATE TABLE counter (id bigint PRIMARY KEY, n bigint NOT NULL); INSERT INTO counter VALUES (1, 0)")
        try folder.write("job.yaml", """
            version: 1
            store: { postgres: "\(url)", busy_timeout: 300ms }
            entities:
              Counter: { columns: { id: integer primary key, n: integer not null } }
            jobs:
              bump: { steps: [{ batch-update: { entity: Counter, set: { n: "n + 1" } } }] }
            """)
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "\(PostgresServer.binaries)/psql")
        holder.arguments = [url, "-X", "-q", "-c", "BEGIN; LOCK TABLE counter IN EXCLUSIVE MODE; SELECT pg_sleep(5); COMMIT;"]
        holder.standardOutput = FileHandle.nullDevice
        try holder.run()
        defer { holder.terminate(); holder.waitUntilExit() }
        // Wait until the lock is held.
        // (Until it is, and no longer: a `for ... where` went on querying after it was held, and on
        // a busy machine a hundred psql calls outlasted the holder's five seconds.)
        for _ in 0..<100 {
            if try PostgresServer.psql(url, "SELECT count(*) FROM pg_locks WHERE mode = 'ExclusiveLock' AND relation = 'counter'::regclass") != "0" { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        let run = try Batchrun.run(["job.yaml", "--no-progress"], in: folder.url)
        #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
        #expect(run.stdout.contains("another transaction held a lock the store needed"), "\(run.stdout)")
        #expect(try PostgresServer.psql(url, "SELECT n FROM counter") == "0")
    }
}

/// The queue on PostgreSQL: three workers on twelve items, one killed with SIGKILL (with its
/// run) and one frozen with SIGSTOP past its lease, then woken.
@Suite("PostgreSQL queue")
struct PostgresQueueTests {
    static let items = 12, rows = 1_500

    /// Every item inserts its own rows and bumps one shared counter (under recompute, as three
    /// items bump it at once): a batch applied twice shows as a constraint conflict (the item
    /// fails) or as a counter past the number of items.
    static func submit(_ folder: TemporaryFolder, url: String) throws {
        try PostgresServer.psql(url, """
            CREATE TABLE counter (id bigint PRIMARY KEY, n bigint NOT NULL); INSERT INTO counter VALUES (1, 0);
            CREATE TABLE entry (item bigint NOT NULL, k bigint NOT NULL, PRIMARY KEY (item, k));
            """)
        for item in 1...items {
            var feed = "item,k\n"
            for k in 1...rows { feed += "\(item),\(k)\n" }
            try folder.write("feed-\(item).csv", feed)
            try folder.write("item-\(item).yaml", """
                version: 1
                store: { postgres: "\(url)" }
                entities:
                  Counter: { columns: { id: integer primary key, n: integer not null } }
                  Entry:
                    columns: { item: integer not null, k: integer not null }
                    primary_key: [item, k]
                jobs:
                  load: { batch_size: 25, steps: [{ insert: { entity: Entry, from: feed-\(item).csv } }] }
                  bump:
                    needs: load
                    merge_policy: recompute
                    steps: [{ batch-update: { entity: Counter, set: { n: "n + 1" } } }]
                """)
        }
        let submitted = try Batchrun.run(["submit", url] + (1...items).map { "item-\($0).yaml" }, in: folder.url)
        #expect(submitted.status == 0, "\(submitted.stderr)")
    }

    /// A job file on `url` with one table, `T`, and one job, `load`, of `steps` (on line 6).
    /// What the store's run history knows item `id` of the queue at `url` by: `postgresql://HOST:PORT/DB#ID`.
    static func runIdentity(_ url: String, item id: String) throws -> String {
        let parts = try #require(URLComponents(string: url))
        return "postgresql://\(parts.host ?? ""):\(parts.port ?? 5432)\(parts.path)#\(id)"
    }

    static func tableJob(_ url: String, steps: String) -> String {
        """
        version: 1
        store: { postgres: "\(url)" }
        entities:
          T: { columns: { id: integer primary key, v: text } }
        jobs:
          load: { steps: [\(steps)] }
        """
    }

    static func startWorker(_ folder: TemporaryFolder, url: String) throws -> Process {
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: folder.write(".worker-\(UUID().uuidString).log", "")))
        return try Batchrun.start(["worker", url, "--trust-submitters", "--lease", "2s", "--jobs", "1"], in: folder, output: log)
    }

    /// The sockets a process has open (their inodes).
    static func sockets(of pid: Int32) -> Set<String> {
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
        return Set(descriptors.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)") }
            .filter { $0.hasPrefix("socket:") })
    }

    /// Waits until `pid` runs an item whose run has committed rows; false after 60 s.
    static func waitUntilRunning(_ pid: Int32, url: String) throws -> Bool {
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if !QueueTests.children(of: pid).isEmpty,
               try PostgresServer.psql(url, "SELECT count(*) FROM _batchrun_queue WHERE state = 'running' AND worker LIKE '\(pid)@%'") == "1",
               try PostgresServer.psql(url, "SELECT count(*) > 0 FROM entry") == "t" {
                return true
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return false
    }

    @Test("three workers, one killed with its run and one frozen past its lease: every item's rows once, the counter bumped once per item")
    func killedAndFrozenWorkers() throws {
        let url = try PostgresServer.database("queue")
        let folder = try TemporaryFolder()
        try Self.submit(folder, url: url)
        var workers = try (0..<3).map { _ in try Self.startWorker(folder, url: url) }
        defer {
            for worker in workers where worker.isRunning {
                kill(worker.processIdentifier, SIGCONT)
                kill(worker.processIdentifier, SIGKILL)
            }
        }

        // A worker and its run die at once, as when a machine goes down.
        let killed = workers[0].processIdentifier
        #expect(try Self.waitUntilRunning(killed, url: url))
        let killedRuns = QueueTests.children(of: killed)
        kill(killed, SIGKILL)
        for child in killedRuns { kill(child, SIGKILL) }

        // A worker and its run are paused past the lease, then go on as if nothing happened.
        let frozen = workers[1].processIdentifier
        #expect(try Self.waitUntilRunning(frozen, url: url))
        let frozenRuns = QueueTests.children(of: frozen)
        // A runner holds none of its worker's sessions (they would outlive a worker that died).
        for run in frozenRuns { #expect(Self.sockets(of: run).isDisjoint(with: Self.sockets(of: frozen))) }
        let frozenItem = try PostgresServer.psql(url, "SELECT id FROM _batchrun_queue WHERE state = 'running' AND worker LIKE '\(frozen)@%'")
        for pid in [frozen] + frozenRuns { kill(pid, SIGSTOP) }
        // A fresh worker, as a restarted machine would bring: free to take the frozen item over
        // once its lease (2 s) runs out. The freeze lasts until one has (the state waited for,
        // not a time: on a busy machine the other workers' own items kept them past 4.5 s).
        workers.append(try Self.startWorker(folder, url: url))
        let takenOver = Date().addingTimeInterval(120)
        while Date() < takenOver,
              try PostgresServer.psql(url, "SELECT count(*) FROM _batchrun_queue WHERE id = \(frozenItem) AND attempts > 1") != "1" {
            Thread.sleep(forTimeInterval: 0.1)
        }
        #expect(try PostgresServer.psql(url, "SELECT count(*) FROM _batchrun_queue WHERE id = \(frozenItem) AND attempts > 1") == "1")
        for pid in [frozen] + frozenRuns { kill(pid, SIGCONT) }

        let deadline = Date().addingTimeInterval(120)
        while Date() < deadline,
              try PostgresServer.psql(url, "SELECT count(*) FROM _batchrun_queue WHERE state IN ('done', 'failed')") != String(Self.items) {
            Thread.sleep(forTimeInterval: 0.1)
        }
        for worker in workers where worker.isRunning { kill(worker.processIdentifier, SIGTERM) }
        for worker in workers { worker.waitUntilExit() }

        let states = try PostgresServer.psql(url, "SELECT string_agg(state || ':' || c, ',' ORDER BY state) FROM (SELECT state, count(*) AS c FROM _batchrun_queue GROUP BY state) AS t")
        let entries = try PostgresServer.psql(url, "SELECT count(DISTINCT item) || ' ' || min(c) || ' ' || max(c) FROM (SELECT item, count(*) AS c FROM entry GROUP BY item) AS t")
        let counter = try PostgresServer.psql(url, "SELECT n FROM counter")
        let failures = try PostgresServer.psql(url, "SELECT string_agg(id || ': ' || coalesce(error, ''), '; ') FROM _batchrun_queue WHERE state <> 'done'")
        #expect(states == "done:\(Self.items)", "\(failures)")
        let logs = try folder.files().filter { $0.hasPrefix(".worker-") }.map { try String(contentsOfFile: folder.path($0), encoding: .utf8) }
        // Each item as the queue has it, for a failure to say which item went wrong and how.
        let items = { (try? PostgresServer.psql(url, "SELECT string_agg(id || ' ' || name || ' ' || state || ' attempts ' || attempts || ' status ' "
                                                + "|| coalesce(status::text, '-') || ' rows ' || (SELECT count(*) FROM entry WHERE entry.item = q.id) "
                                                + "|| E'\\n' || log, E'\\n----\\n' ORDER BY id) FROM _batchrun_queue AS q")) ?? "" }
        #expect(entries == "\(Self.items) \(Self.rows) \(Self.rows)", "\(items())\n\(logs.joined(separator: "\n-----\n"))")
        #expect(counter == String(Self.items))
        // The killed and the frozen worker's items were taken over.
        #expect(try Int(PostgresServer.psql(url, "SELECT count(*) FROM _batchrun_queue WHERE attempts > 1")) ?? 0 >= 2)
        #expect(logs.contains { $0.contains("lost") }, "\(logs)")
        if ProcessInfo.processInfo.environment["QUEUE_DEBUG"] != nil { print(items() + "\n" + logs.joined(separator: "\n-----\n")) }
    }

    @Test("a worker's items run one after another in one runner process: each item's output in its own log, a failed item does not stop the next, a hook cannot read the runner's requests")
    func itemsShareARunner() throws {
        let url = try PostgresServer.database("runner")
        let folder = try TemporaryFolder()
        func item(_ name: String, key: Int, hook: String? = nil) throws {
            try folder.write(name, """
                version: 1
                store: { postgres: "\(url)" }
                entities:
                  T: { columns: { id: integer primary key, v: text } }
                jobs:
                  load:
                    steps: [{ insert: { entity: T, rows: [{ id: \(key), v: \(name) }] } }]
                \(hook.map { "    on_complete: \"\($0)\"" } ?? "")
                """)
        }
        // The hook reads its standard input to the end: were it the runner's requests, the items after it would be lost.
        try item("one.yaml", key: 1, hook: "cat > /dev/null")
        try item("again.yaml", key: 1)   // key 1 is taken: fails under `error`
        try item("two.yaml", key: 2)
        try item("three.yaml", key: 3)
        let submitted = try Batchrun.run(["submit", url, "one.yaml", "again.yaml", "two.yaml", "three.yaml"], in: folder.url)
        #expect(submitted.status == 0, "\(submitted.stderr)")

        let worked = try Batchrun.run(["worker", url, "--once", "--trust-submitters", "--allow-hooks"], in: folder.url)
        #expect(worked.status == 1, "\(worked.stdout)\(worked.stderr)")
        let processes = Set(worked.stdout.split(separator: "\n").compactMap { line -> String? in
            guard let range = line.range(of: "(process ") else { return nil }
            return String(line[range.upperBound...].prefix { $0.isNumber })
        })
        #expect(processes.count == 1, "\(worked.stdout)")   // four items, one runner
        #expect(try PostgresServer.psql(url, "SELECT string_agg(id || v, ' ' ORDER BY id) FROM t") == "1one.yaml 2two.yaml 3three.yaml")
        #expect(try PostgresServer.psql(url, "SELECT string_agg(state, ' ' ORDER BY id) FROM _batchrun_queue") == "done failed done done")
        for id in 1...4 {
            let log = try Batchrun.run(["queue", url, "--log", String(id)], in: folder.url).stdout
            #expect(log.components(separatedBy: "Done in").count == 2, "item \(id): \(log)")   // its own run's summary, once
            #expect(log.contains(id == 2 ? "ERROR load" : "OK    load"), "item \(id): \(log)")
        }
    }

    @Test("a runner is replaced after 100 items: 101 items through one worker run in two processes, 100 and 1")
    func runnerReplacedAfterItsItems() throws {
        let url = try PostgresServer.database("recycle")
        let folder = try TemporaryFolder()
        try folder.write("tick.yaml", """
            version: 1
            store: { postgres: "\(url)" }
            entities:
              Tick: { columns: { id: integer primary key, v: text } }
            jobs:
              tick:
                steps: [{ insert: { entity: Tick, rows: [{ v: x }] } }]
            """)
        let submitted = try Batchrun.run(["submit", url] + Array(repeating: "tick.yaml", count: 101), in: folder.url)
        #expect(submitted.status == 0, "\(submitted.stderr)")
        let worked = try Batchrun.run(["worker", url, "--once", "--trust-submitters"], in: folder.url)
        #expect(worked.status == 0, "\(worked.stdout)\(worked.stderr)")
        var itemsPerProcess: [String: Int] = [:]
        for line in worked.stdout.split(separator: "\n") {
            guard let range = line.range(of: "(process ") else { continue }
            itemsPerProcess[String(line[range.upperBound...].prefix { $0.isNumber }), default: 0] += 1
        }
        #expect(itemsPerProcess.values.sorted() == [1, 100], "\(itemsPerProcess)")
        #expect(try PostgresServer.psql(url, "SELECT count(*) FROM tick") == "101")
        #expect(try PostgresServer.psql(url, "SELECT count(*) FROM _batchrun_queue WHERE state = 'done'") == "101")
    }

    @Test("a worker that died after its item's run ended ok: the next worker moves the item to done with the report rebuilt from the store, does not run it again, and its run is known by the item, not by a file")
    func finishedRunKeepsItsReport() throws {
        let url = try PostgresServer.database("kept")
        let folder = try TemporaryFolder()
        try folder.write("item.yaml", Self.tableJob(url, steps: "{ insert: { entity: T, rows: [{ id: 1, v: a }, { id: 2, v: b }, { id: 3, v: c }] } }"))
        let submitted = try Batchrun.run(["submit", url, "item.yaml"], in: folder.url)
        #expect(submitted.status == 0, "\(submitted.stderr)")
        // Claimed by a worker that is gone: its lease ran out after its run had ended ok, before
        // the worker could end the claim. The run is the one a runner would have made: the
        // item's text from the queue, known by the item.
        let claim = try PostgresServer.psql(url, """
            UPDATE _batchrun_queue SET state = 'running', token = token + 1, worker = '1@gone', attempts = attempts + 1,
                lease_until = clock_timestamp() - interval '1 second', started_at = clock_timestamp() RETURNING id || ' ' || token
            """).split(separator: " ")
        let (id, token) = (String(claim[0]), String(claim[1]))
        let copy = try TemporaryFolder()
        try copy.write("item.yaml", try PostgresServer.psql(url, "SELECT job_text FROM _batchrun_queue WHERE id = \(id)"))
        let run = try Batchrun.run(["run", copy.path("item.yaml"), "--resume", "--relative-to", folder.url.path,
                                    "--fence", "\(id):\(token):30:\(url)", "--checked-at-submit"], in: folder.url)
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        try PostgresServer.psql(url, "UPDATE _batchrun_runs SET file = '\(try Self.runIdentity(url, item: id))'")

        let worked = try Batchrun.run(["worker", url, "--once", "--trust-submitters"], in: folder.url)
        #expect(worked.status == 0, "\(worked.stdout)\(worked.stderr)")
        #expect(worked.stdout.contains("taking over"), "\(worked.stdout)")
        #expect(try PostgresServer.psql(url, "SELECT state FROM _batchrun_queue WHERE id = \(id)") == "done")
        let kept = try Batchrun.run(["queue", url, "--report", id], in: folder.url).stdout
        #expect(kept.contains("\"status\" : \"ok\"") || kept.contains("\"status\":\"ok\""), "\(kept)")
        #expect(try PostgresServer.psql(url, "SELECT log FROM _batchrun_queue WHERE id = \(id)").contains("rebuilt"))
        #expect(try PostgresServer.psql(url, "SELECT count(*) FROM t") == "3", "the item ran again")
        #expect(try PostgresServer.psql(url, "SELECT count(*) FROM _batchrun_runs") == "1", "the item's run is not the run of its text")
    }

    @Test("a PostgreSQL item runs from its text, never from a file: nothing of it is left in the worker's TMPDIR, its log and report are in its row, and the store's history knows its run by the item")
    func itemRunsFromItsText() throws {
        let url = try PostgresServer.database("from_text")
        let folder = try TemporaryFolder()
        try folder.write("item.yaml", Self.tableJob(url, steps: "{ insert: { entity: T, rows: [{ id: 1, v: a }] } }"))
        let submitted = try Batchrun.run(["submit", url, "item.yaml"], in: folder.url)
        #expect(submitted.status == 0, "\(submitted.stderr)")
        let scratch = try TemporaryFolder()
        let worked = try Batchrun.run(["worker", url, "--once", "--trust-submitters"], in: folder.url, environment: ["TMPDIR": scratch.url.path])
        #expect(worked.status == 0, "\(worked.stdout)\(worked.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.url.path).isEmpty, "the worker's scratch folder is removed")
        #expect(try PostgresServer.psql(url, "SELECT state || ' ' || (report IS NOT NULL) || ' ' || (log <> '') FROM _batchrun_queue") == "done true true")
        let id = try PostgresServer.psql(url, "SELECT id FROM _batchrun_queue")
        let identity = try Self.runIdentity(url, item: id)
        #expect(try PostgresServer.psql(url, "SELECT file FROM _batchrun_runs") == identity)
        let report = try Batchrun.run(["queue", url, "--report", id], in: folder.url).stdout
        #expect(report.contains("\"file\" : \"\(identity)\""), "the report names the item: \(report.prefix(300))")
        #expect(try PostgresServer.psql(url, "SELECT v FROM t") == "a")
    }

    @Test("SIGINT to a worker while its runner runs an item: the worker ends by SIGINT, the item is pending again, and the next worker finishes it with its rows once")
    func interruptedRunner() throws {
        let slow = try SlowItem(database: "runner_sigint", workerArguments: ["--once"])
        defer { if slow.worker.isRunning { kill(slow.worker.processIdentifier, SIGKILL) } }
        let interrupted = Date()
        kill(slow.worker.processIdentifier, SIGINT)
        slow.worker.waitUntilExit()
        #expect(Date().timeIntervalSince(interrupted) < 30, "the statement in flight is cancelled on the server")
        #expect(QueueTests.endedBySIGINT(slow.worker))
        #expect(try PostgresServer.psql(slow.url, "SELECT state FROM _batchrun_queue") == "pending")
        #expect(slow.statementsRunning(becoming: "0", within: 10) == "0")

        try PostgresServer.psql(slow.url, "INSERT INTO go VALUES (1)")
        let again = try Batchrun.run(["worker", slow.url, "--once", "--trust-submitters"], in: slow.folder.url)
        #expect(again.status == 0, "\(again.stdout)\(again.stderr)")
        #expect(try PostgresServer.psql(slow.url, "SELECT state FROM _batchrun_queue") == "done")
        #expect(try PostgresServer.psql(slow.url, "SELECT string_agg(id || v, ' ' ORDER BY id) FROM t") == "1a 2b")
    }

    @Test("a worker killed with SIGKILL mid-item: its orphaned runner cancels the item's statement and ends; the item is taken over and finished once")
    func orphanedRunner() throws {
        let slow = try SlowItem(database: "runner_orphan", workerArguments: ["--once", "--lease", "2s"])
        defer { if slow.worker.isRunning { kill(slow.worker.processIdentifier, SIGKILL) } }
        let runner = try #require(QueueTests.children(of: slow.worker.processIdentifier).first)
        defer { kill(runner, SIGKILL) }
        // Not worker.waitUntilExit(): Foundation waits there until every process holding a
        // descriptor it gave the worker has ended, the runner too.
        kill(slow.worker.processIdentifier, SIGKILL)
        let killed = Date()
        while Date().timeIntervalSince(killed) < 30, QueueTests.isRunning(runner) { Thread.sleep(forTimeInterval: 0.05) }
        #expect(!QueueTests.isRunning(runner), "the orphaned runner ended")
        #expect(slow.statementsRunning(becoming: "0", within: 10) == "0", "its statement was cancelled")

        try PostgresServer.psql(slow.url, "INSERT INTO go VALUES (1)")
        Thread.sleep(forTimeInterval: 2.5)   // the dead worker's lease runs out
        let again = try Batchrun.run(["worker", slow.url, "--once", "--trust-submitters"], in: slow.folder.url)
        #expect(again.status == 0, "\(again.stdout)\(again.stderr)")
        #expect(try PostgresServer.psql(slow.url, "SELECT state || ' ' || attempts FROM _batchrun_queue") == "done 2")
        #expect(try PostgresServer.psql(slow.url, "SELECT string_agg(id || v, ' ' ORDER BY id) FROM t") == "1a 2b")
    }

    /// A queued item whose fetch counts to two billion on the server until table go has a row,
    /// and a worker started on it: returns once the item's statement runs on the server.
    struct SlowItem {
        let url: String
        let folder: TemporaryFolder
        let worker: Process

        init(database: String, workerArguments: [String]) throws {
            url = try PostgresServer.database(database)
            folder = try TemporaryFolder()
            try folder.write("slow.yaml", """
                version: 1
                store: { postgres: "\(url)" }
                entities:
                  T: { columns: { id: integer primary key, v: text } }
                  Go: { columns: { id: integer primary key } }
                jobs:
                  load:
                    steps:
                      - insert: { entity: T, rows: [{ id: 1, v: a }, { id: 2, v: b }] }
                      - fetch: { entity: T, where: "CASE WHEN EXISTS (SELECT 1 FROM go) THEN true ELSE (SELECT count(*) FROM generate_series(1, 2000000000)) > 0 END" }
                """)
            #expect(try Batchrun.run(["submit", url, "slow.yaml"], in: folder.url).status == 0)
            let log = try FileHandle(forWritingTo: URL(fileURLWithPath: folder.write("worker.log", "")))
            worker = try Batchrun.start(["worker", url, "--trust-submitters"] + workerArguments, in: folder, output: log)
            let running = statementsRunning(becoming: "1", within: 60)
            #expect(running == "1", """
                the sessions: \((try? PostgresServer.psql(url, "SELECT string_agg(pid || ' ' || backend_type || ' ' || state || ' ' || left(query, 300), E'\\n') FROM pg_stat_activity WHERE query LIKE '%generate_series(1, 2000000000)%' AND pid <> pg_backend_pid() AND datname = current_database()")) ?? "")
                the worker's output: \((try? String(contentsOfFile: folder.path("worker.log"), encoding: .utf8)) ?? "")
                the queue: \((try? PostgresServer.psql(url, "SELECT state, status, error, log FROM _batchrun_queue")) ?? "")
                """)
        }

        /// How many of the item's counting statements run in its database (its fetch, not a check
        /// that prepares it, nor a parallel worker; the other test's item runs in another database
        /// of the same server), once that is `expected` or `seconds` passed: a cancelled statement
        /// ends on the server a moment after the client asked.
        func statementsRunning(becoming expected: String, within seconds: Double) -> String? {
            let deadline = Date().addingTimeInterval(seconds)
            var count: String?
            repeat {
                count = try? PostgresServer.psql(url, "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%generate_series(1, 2000000000)%' "
                                                 + "AND query NOT LIKE 'PREPARE%' AND backend_type = 'client backend' "
                                                 + "AND state = 'active' AND pid <> pg_backend_pid() AND datname = current_database()")
                if count == expected { break }
                Thread.sleep(forTimeInterval: 0.05)
            } while Date() < deadline
            return count
        }
    }

    @Test("submit checks every file first (one invalid: exit 2, nothing queued); queue lists items and prints an item's log and report")
    func submitAndList() throws {
        let url = try PostgresServer.database("listing")
        let folder = try TemporaryFolder()
        try folder.write("good.yaml", Self.tableJob(url, steps: #"{ insert: { entity: T, rows: [{ id: 1, v: a }] } }, { batch-update: { entity: T, set: { v: ":x" } } }"#))
        try folder.write("bad.yaml", Self.tableJob(url, steps: #"{ fetch: { entity: T, where: "nope > 1" } }"#))
        let refused = try Batchrun.run(["submit", url, "good.yaml", "bad.yaml"], in: folder.url)
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("bad.yaml:6:"), "\(refused.stderr)")
        #expect(try PostgresServer.psql(url, "SELECT to_regclass('_batchrun_queue') IS NULL") == "t")   // not even the table

        let submitted = try Batchrun.run(["submit", url, "good.yaml", "good.yaml", "--param", "x=1"], in: folder.url)
        #expect(submitted.status == 0, "\(submitted.stderr)")
        #expect(submitted.stdout.contains("queued good.yaml as item 1 on postgresql://"), "\(submitted.stdout)")
        let pending = try Batchrun.run(["queue", url], in: folder.url)
        #expect(pending.stdout.contains(": pending 2 · scheduled 0 · retryable 0 · running 0 · done 0 · failed 0 · cancelled 0"), "\(pending.stdout)")
        #expect(pending.stdout.contains("  1  good.yaml") && pending.stdout.contains("  2  good.yaml"))

        // The first item inserts row 1; the second finds it taken under `error` and fails.
        let worked = try Batchrun.run(["worker", url, "--once", "--quiet", "--trust-submitters"], in: folder.url)
        #expect(worked.status == 1, "\(worked.stdout)\(worked.stderr)")
        let listed = try Batchrun.run(["queue", url, "--format", "json"], in: folder.url)
        let listing = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any])
        #expect(listing["counts"] as? [String: Int] == ["pending": 0, "scheduled": 0, "retryable": 0, "running": 0, "done": 1, "failed": 1, "cancelled": 0])
        let items = listing["items"] as? [[String: Any]] ?? []
        #expect(items.map { $0["state"] as? String } == ["done", "failed"])
        let lastError = items.last?["error"] as? String ?? ""
        #expect(lastError.contains("constraint conflict under merge policy error"), "\(items)")
        #expect(try PostgresServer.psql(url, "SELECT v FROM t") == "1")   // the param travelled with the item

        let log = try Batchrun.run(["queue", url, "--log", "2"], in: folder.url)
        #expect(log.stdout.contains("ERROR load"), "\(log.stdout)")
        let report = try Batchrun.run(["queue", url, "--report", "1"], in: folder.url)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(report.stdout.utf8)) as? [String: Any])
        #expect(json["status"] as? String == "ok")
        #expect(try Batchrun.run(["queue", url, "--log", "9"], in: folder.url).status == 2)
    }
}
