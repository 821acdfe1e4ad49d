import Foundation
import GRDB
import Testing

/// `--resume`: runs interrupted by SIGKILL and SIGINT at random moments, continued until they
/// end ok, leave what one uninterrupted run leaves.
@Suite("Resume, exactly once")
struct ResumeTests {
    static let rows = 20_000

    /// A store of counters and a marker row, and a job file with relative updates, a delete, a
    /// fetch and a downstream job that uses the fetch's output.
    static func prepare(_ folder: TemporaryFolder, store: String = "store.sqlite") throws {
        let queue = try DatabaseQueue(path: folder.path(store))
        try queue.write { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "CREATE TABLE Counter (id INTEGER PRIMARY KEY, n INTEGER NOT NULL, grp TEXT NOT NULL)")
            try db.execute(sql: "CREATE TABLE Pair (a INTEGER NOT NULL, b TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (a, b))")
            try db.execute(sql: "CREATE TABLE Marker (id INTEGER PRIMARY KEY, total INTEGER)")
            try db.execute(sql: "INSERT INTO Marker VALUES (1, NULL)")
            for id in 1...rows {
                try db.execute(sql: "INSERT INTO Counter VALUES (?, 0, ?)", arguments: [id, "g\(id % 5)"])
            }
            for a in 1...100 {
                for b in ["x", "y", "z"] { try db.execute(sql: "INSERT INTO Pair VALUES (?, ?, 0)", arguments: [a, b]) }
            }
        }
        try folder.write("job.yaml", jobFile(store: store))
    }

    /// The job file of the resume tests: relative updates in small batches, a delete, a fetch
    /// and a job that uses its output. `store` as the job file writes it.
    static func jobFile(store: String) -> String {
        """
            version: 1
            store: \(store)
            entities:
              Counter:
                columns: { id: integer primary key, n: integer not null, grp: text not null }
              Pair:
                columns: { a: integer not null, b: text not null, n: integer not null }
                primary_key: [a, b]
              Marker:
                columns: { id: integer primary key, total: integer }
            jobs:
              bump:
                batch_size: 20
                steps:
                  - batch-update: { entity: Counter, set: { n: "n + 1" } }
                  - batch-update: { entity: Counter, where: "grp = 'g1'", set: { n: "n + 10" } }
              pairs:
                batch_size: 7
                steps:
                  - batch-update: { entity: Pair, set: { n: "n + 1" } }
              purge:
                needs: bump
                batch_size: 10
                steps:
                  - delete: { entity: Counter, where: "id % 7 = 0" }
              stats:
                needs: [purge, pairs]
                steps:
                  - fetch: { entity: Counter, select: { total: "sum(n)" }, as: totals }
              record:
                needs: stats
                steps:
                  - batch-update: { entity: Marker, set: { total: ":total" }, params: { total: "${totals.total}" } }
            """
    }

    /// A connection of the test's own, waiting while batchrun writes.
    static func queue(_ path: String) throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.busyMode = .timeout(30)
        return try DatabaseQueue(path: path, configuration: configuration)
    }

    /// Every user table's rows, in key order, as text.
    static func contents(_ path: String) throws -> [String: [String]] {
        let queue = try Self.queue(path)
        return try queue.read { db in
            var tables: [String: [String]] = [:]
            for (table, order) in [("Counter", "id"), ("Pair", "a, b"), ("Marker", "id")] {
                tables[table] = try Row.fetchAll(db, sql: "SELECT * FROM \(table) ORDER BY \(order)").map(\.description)
            }
            return tables
        }
    }

    @Test("killed (SIGKILL and SIGINT) at random moments and resumed until ok: the store equals one uninterrupted run's, rows_total its rows")
    func killedAndResumed() throws {
        let reference = try TemporaryFolder(), folder = try TemporaryFolder()
        try Self.prepare(reference)
        try Self.prepare(folder)
        let started = Date()
        let uninterrupted = try Batchrun.run(["job.yaml", "--quiet", "--report", "r.json"], in: reference.url)
        let wholeRun = Date().timeIntervalSince(started)
        #expect(uninterrupted.status == 0, "\(uninterrupted.stdout)\(uninterrupted.stderr)")

        let (interruptions, committed, endedOK) = try InterruptedRuns(folder: folder, arguments: ["job.yaml", "--quiet", "--report", "r.json"],
                                                                      wholeRun: wholeRun).run()
        #expect(endedOK, "the run never ended ok")
        #expect(interruptions >= 10)
        #expect(committed >= 6, "only \(committed) of the killed attempts had committed rows")
        let same = try Self.contents(folder.path("store.sqlite")) == Self.contents(reference.path("store.sqlite"))
        if !same, ProcessInfo.processInfo.environment["RESUME_DEBUG"] != nil {
            try? FileManager.default.copyItem(atPath: folder.path("store.sqlite"), toPath: "/tmp/failed-store.sqlite")
            try? FileManager.default.copyItem(atPath: folder.path("store.sqlite-wal"), toPath: "/tmp/failed-store.sqlite-wal")
        }
        #expect(same)
        let expected = try reference.json("r.json"), final = try folder.json("r.json")
        let expectedRows = (expected["jobs"] as! [[String: Any]]).map { ($0["name"] as! String, $0["rows"] as! [String: Int]) }
        let totals = (final["jobs"] as! [[String: Any]]).map { ($0["name"] as! String, $0["rows_total"] as! [String: Int]) }
        #expect(totals.map(\.0) == expectedRows.map(\.0))
        #expect(totals.map(\.1) == expectedRows.map(\.1))
        #expect(final["resumed_from"] != nil || interruptions == 0)
    }

    @Test("after a kill and a resume: the text report marks the job done earlier; `runs` lists both runs, newest first")
    func doneEarlierAndHistory() throws {
        let folder = try TemporaryFolder()
        try Batchrun.writeLongFeed(in: folder)
        try folder.write("job.yaml", """
            version: 1
            store: store.sqlite
            entities:
              T: { columns: { id: integer primary key, minutes: real } }
              Seen: { columns: { id: integer primary key } }
            jobs:
              first: { steps: [{ insert: { entity: Seen, rows: [{ id: 1 }] } }] }
              load: { needs: first, batch_size: 500, steps: [{ insert: { entity: T, from: feed.csv } }] }
            """)
        let killed = try Batchrun.startUntilRows(in: "T", folder, ["job.yaml", "--quiet"])
        kill(killed.processIdentifier, SIGKILL)
        killed.waitUntilExit()

        let resumed = try Batchrun.run(["job.yaml", "--resume", "--no-progress"], in: folder.url)
        #expect(resumed.status == 0, "\(resumed.stdout)\(resumed.stderr)")
        let firstLine = try #require(resumed.stdout.split(separator: "\n").first { $0.contains("first") && $0.contains("done earlier") })
        #expect(!firstLine.contains("load"))
        #expect(resumed.stdout.contains("resuming run 1"), "\(resumed.stdout)")

        let json = try Batchrun.run(["runs", "job.yaml", "--format", "json"], in: folder.url)
        #expect(json.status == 0, "\(json.stderr)")
        let runs = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(runs.map { $0["id"] as? Int } == [2, 1])
        #expect(runs[0]["status"] as? String == "ok" && runs[0]["resumed_from"] as? Int == 1)
        #expect(runs[1]["status"] as? String != "ok")
        let jobs = try #require(runs[0]["jobs"] as? [[String: Any]])
        #expect(jobs.map { $0["name"] as? String } == ["first", "load"])
        #expect(jobs.map { $0["done_earlier"] as? Bool } == [true, false])
        let rows = try #require(runs[0]["rows"] as? [String: Int])
        #expect((rows["inserted"] ?? 0) > 0 && (rows["inserted"] ?? 0) < 400_000, "this attempt's rows: \(rows)")

        let one = try Batchrun.run(["runs", "job.yaml", "--limit", "1"], in: folder.url)
        let lines = one.stdout.split(separator: "\n")
        #expect(lines.count == 2 && lines[0].contains("resumed from") && lines[1].hasPrefix("2 "), "\(one.stdout)")
        #expect(lines[1].contains("first done earlier"))
    }

    @Test("killed while its last job's hook runs: resumed, the job is done earlier and the hook does not run again")
    func killedInTheLastJobsHook() throws {
        // The last job's end waits for the run's end, one transaction less, but not in a file
        // with hooks: they run in between, and only a job recorded done keeps them from running twice.
        let folder = try TemporaryFolder()
        try folder.write("job.yaml", """
            version: 1
            store: store.sqlite
            entities:
              T: { columns: { id: integer primary key } }
            jobs:
              load:
                steps: [{ insert: { entity: T, rows: [{ id: 1 }, { id: 2 }] } }]
                on_success: "echo $$ >> hook.log; exec sleep 20"
            """)
        let process = try Batchrun.start(["job.yaml", "--quiet"], in: folder)
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() } }
        let deadline = Date().addingTimeInterval(30)
        var hooks: [String] { ((try? String(contentsOfFile: folder.path("hook.log"), encoding: .utf8)) ?? "").split(separator: "\n").map(String.init) }
        while hooks.isEmpty && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        let hook = try #require(hooks.first.flatMap { pid_t($0) }, "the hook did not start")
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        kill(hook, SIGKILL)

        let resumed = try Batchrun.run(["job.yaml", "--resume", "--no-progress"], in: folder.url)
        #expect(resumed.status == 0, "\(resumed.stdout)\(resumed.stderr)")
        #expect(resumed.stdout.contains("resuming run 1"), "\(resumed.stdout)")
        #expect(resumed.stdout.split(separator: "\n").contains { $0.contains("load") && $0.contains("done earlier") }, "\(resumed.stdout)")
        #expect(hooks.count == 1, "the hook ran again: \(hooks)")
        let queue = try Self.queue(folder.path("store.sqlite"))
        #expect(try queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM T") } == 2)
    }

    @Test("the last job to end while another job's hook runs (--jobs 2) is recorded done at once: killed in that hook and resumed, both jobs are done earlier")
    func lastJobEndsDuringAnothersHook() throws {
        // `quick` ends first and its hook sleeps; `long` ends after it, the last job, while the
        // hook runs. Its end may not wait for the run's: the kill comes before that.
        let folder = try TemporaryFolder()
        try Batchrun.writeLongFeed(in: folder)
        try folder.write("job.yaml", """
            version: 1
            store: store.sqlite
            entities:
              T: { columns: { id: integer primary key, minutes: real } }
              Seen: { columns: { id: integer primary key } }
            jobs:
              quick:
                steps: [{ insert: { entity: Seen, rows: [{ id: 1 }] } }]
                on_success: "echo $$ >> hook.log; exec sleep 60"
              long:
                steps: [{ insert: { entity: T, from: feed.csv } }]
            """)
        let process = try Batchrun.start(["job.yaml", "--quiet", "--jobs", "2"], in: folder)
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() } }
        let queue = try Self.queue(folder.path("store.sqlite"))
        let deadline = Date().addingTimeInterval(60)
        var longRecorded: Bool {
            (try? queue.read { db in
                try Int.fetchOne(db, sql: "SELECT count(*) FROM _batchrun_jobs WHERE job = 'long' AND status = 'ok'") == 1
            }) ?? false
        }
        while !longRecorded && process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        let hookLog = (try? String(contentsOfFile: folder.path("hook.log"), encoding: .utf8)) ?? ""
        #expect(longRecorded, "the last job's end was not written while the other job's hook ran")
        #expect(process.isRunning, "the run ended before the check")
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        if let hook = pid_t(hookLog.trimmingCharacters(in: .whitespacesAndNewlines)) { kill(hook, SIGKILL) }

        let resumed = try Batchrun.run(["job.yaml", "--resume", "--no-progress"], in: folder.url)
        #expect(resumed.status == 0, "\(resumed.stdout)\(resumed.stderr)")
        for job in ["quick", "long"] {
            #expect(resumed.stdout.split(separator: "\n").contains { $0.contains(job) && $0.contains("done earlier") }, "\(resumed.stdout)")
        }
        #expect(try queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM T") } == 400_000)
    }

    @Test("a run whose process is alive is not continued: exit 2, naming the process")
    func liveRunRefused() throws {
        let folder = try TemporaryFolder()
        try Self.prepare(folder)
        // Slow batches, so the run is alive long enough: one row per batch.
        let text = try String(contentsOfFile: folder.path("job.yaml"), encoding: .utf8).replacingOccurrences(of: "batch_size: 20", with: "batch_size: 1")
        try folder.write("job.yaml", text)
        let process = Process()
        process.executableURL = Batchrun.binary
        process.arguments = ["job.yaml", "--quiet"]
        process.currentDirectoryURL = folder.url
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() } }
        // Wait until the run is recorded (its first batch committed).
        let queue = try DatabaseQueue(path: folder.path("store.sqlite"))
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            // sqlite_master read directly: GRDB's schema cache does not see another process's tables.
            // A read may meet the writer's WAL recovery at its start: try again.
            let recorded = (try? queue.read { db in
                try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master WHERE name = '_batchrun_runs'") == 1
                    && (try Int.fetchOne(db, sql: "SELECT count(*) FROM _batchrun_runs") ?? 0) > 0
            }) ?? false
            if recorded { break }
            Thread.sleep(forTimeInterval: 0.02)
        }
        let result = try Batchrun.run(["job.yaml", "--resume"], in: folder.url)
        #expect(result.status == 2)
        #expect(result.stderr.contains("run 1 of this file is still running (process \(process.processIdentifier) on "), "\(result.stderr)")
        #expect(result.stderr.contains("nothing was run"))
    }

    @Test("a job whose definition changed since the interrupted run starts over, and says so")
    func changedDefinitionStartsOver() throws {
        let folder = try TemporaryFolder()
        try Self.prepare(folder)
        let process = Process()
        process.executableURL = Batchrun.binary
        process.arguments = ["job.yaml", "--quiet", "--select", "bump"]
        process.currentDirectoryURL = folder.url
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let queue = try Self.queue(folder.path("store.sqlite"))
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, try queue.read({ db in try Int.fetchOne(db, sql: "SELECT count(*) FROM Counter WHERE n > 0") ?? 0 }) < 500 {
            Thread.sleep(forTimeInterval: 0.005)
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        let done = try queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM Counter WHERE n > 0") ?? 0 }
        #expect(done > 0 && done < Self.rows, "killed after \(done) rows")
        // The first step now adds 2: the job's part of the file changed.
        let text = try String(contentsOfFile: folder.path("job.yaml"), encoding: .utf8)
            .replacingOccurrences(of: "set: { n: \"n + 1\" } }\n      - batch-update: { entity: Counter, where", with: "set: { n: \"n + 2\" } }\n      - batch-update: { entity: Counter, where")
        try folder.write("job.yaml", text)
        let result = try Batchrun.run(["job.yaml", "--resume", "--select", "bump", "--report", "r.json"], in: folder.url)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("starting over job bump: its definition changed since run 1"), "\(result.stdout)")
        let job = try #require((try folder.json("r.json")["jobs"] as? [[String: Any]])?.first)
        #expect((job["rows_total"] as? [String: Int])?["updated"] == Self.rows + Self.rows / 5)
    }

    @Test("a checkpoint is never ahead of its batch: a transaction that fails after the data write keeps neither")
    func checkpointInTheBatchTransaction() throws {
        let folder = try TemporaryFolder()
        try Self.prepare(folder)
        // A first run creates the run-state tables; then every checkpoint past 300 rows fails.
        let first = try Batchrun.run(["job.yaml", "--quiet", "--select", "pairs"], in: folder.url)
        #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
        let queue = try Self.queue(folder.path("store.sqlite"))
        try queue.write { db in
            try db.execute(sql: """
                CREATE TRIGGER fail_checkpoint BEFORE UPDATE ON _batchrun_progress WHEN NEW.job = 'bump' AND NEW.updated > 300
                BEGIN SELECT RAISE(ABORT, 'injected failure after the data write'); END
                """)
        }
        let failed = try Batchrun.run(["job.yaml", "--select", "bump"], in: folder.url)
        #expect(failed.status == 1)
        #expect(failed.stdout.contains("injected failure after the data write"), "\(failed.stdout)")
        let (changed, checkpoint, counted) = try queue.read { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM Counter WHERE n > 0")!,
             try String.fetchOne(db, sql: "SELECT checkpoint FROM _batchrun_progress WHERE job = 'bump' AND step = 0 ORDER BY run_id DESC"),
             try Int.fetchOne(db, sql: "SELECT updated FROM _batchrun_progress WHERE job = 'bump' AND step = 0 ORDER BY run_id DESC"))
        }
        // Three batches of 20 committed with their checkpoints; the fourth's rows went with its checkpoint.
        #expect(changed == 300 && counted == 300)
        #expect(checkpoint == #"{"key":{"_0":[{"integer":300}]}}"#)
        try queue.write { db in try db.execute(sql: "DROP TRIGGER fail_checkpoint") }
        let resumed = try Batchrun.run(["job.yaml", "--select", "bump", "--resume"], in: folder.url)
        #expect(resumed.status == 0, "\(resumed.stdout)\(resumed.stderr)")
        let counts = try queue.read { db in try Row.fetchAll(db, sql: "SELECT n, count(*) AS c FROM Counter GROUP BY n ORDER BY n") }
        #expect(counts.map { [$0["n"] as Int, $0["c"] as Int] } == [[1, Self.rows * 4 / 5], [11, Self.rows / 5]])
    }

    @Test("a ledger an earlier batchrun made (no seq column) is read in rowid order, and gains seq, in that order, on the next run")
    func ledgerOfAnEarlierVersion() throws {
        let folder = try TemporaryFolder()
        try folder.write("job.yaml", """
            version: 1
            store: store.sqlite
            entities:
              T: { columns: { id: integer primary key } }
            defaults: { merge_policy: object-trump }
            jobs:
              zeta: { steps: [{ insert: { entity: T, rows: [{ id: 1 }] } }] }
              alpha: { needs: zeta, steps: [{ insert: { entity: T, rows: [{ id: 2 }] } }] }
            """)
        func jobOrders() throws -> [[String]] {
            let listed = try Batchrun.run(["runs", "job.yaml", "--format", "json"], in: folder.url)
            #expect(listed.status == 0, "\(listed.stderr)")
            let runs = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]])
            return runs.map { ($0["jobs"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String } }
        }
        #expect(try Batchrun.run(["job.yaml", "--quiet"], in: folder.url).status == 0)
        // The ledger as batchrun 1.x left it: no seq column.
        let queue = try Self.queue(folder.path("store.sqlite"))
        try queue.write { db in try db.execute(sql: "ALTER TABLE _batchrun_jobs DROP COLUMN seq") }
        #expect(try jobOrders() == [["zeta", "alpha"]])
        #expect(try Batchrun.run(["job.yaml", "--quiet"], in: folder.url).status == 0)
        #expect(try jobOrders() == [["zeta", "alpha"], ["zeta", "alpha"]])
        let numbered = try queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM _batchrun_jobs WHERE seq IS NOT NULL") }
        #expect(numbered == 4)
    }
}
