import Foundation
import GRDB
import Testing

/// Runs the built binary on every job file in `jobs/` and `examples/`, in a copy of the package's
/// folders, and checks the rows the run left in its SQLite store.
@Suite("Examples and jobs run end to end")
struct ExampleRunTests {
    /// A copy of jobs/ and examples/ with the same layout, so relative paths resolve as in the package.
    func workspace() throws -> TemporaryFolder {
        let folder = try TemporaryFolder()
        try folder.copyFromPackage("jobs")
        try folder.copyFromPackage("examples")
        return folder
    }

    /// The CSV feed's rows, read independently of batchrun.
    func feedSessions() throws -> [(id: Int, user: String, startedAt: String, duration: Double?, status: String)] {
        let text = try String(contentsOf: Batchrun.packageRoot.appendingPathComponent("examples/data/sessions.csv"), encoding: .utf8)
        return text.split(separator: "\n").dropFirst().map { line in
            let f = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            return (Int(f[0])!, f[1], f[2], Double(f[3]), f[4])
        }
    }

    @Test("every job file in jobs/ and examples/ is valid and runs")
    func everyFileRuns() throws {
        let folder = try workspace()
        let files = try ["jobs", "examples"].flatMap { dir in
            try FileManager.default.contentsOfDirectory(atPath: folder.path(dir))
                .filter { $0.hasSuffix(".yaml") }.map { "\(dir)/\($0)" }
        }
        #expect(files.count >= 3)
        for file in files {
            let check = try Batchrun.run(["check", file], in: folder.url)
            #expect(check.status == 0, "\(file): \(check.stderr)")
            let run = try Batchrun.run([file], in: folder.url)
            #expect(run.status == 0, "\(file): \(run.stdout)\n\(run.stderr)")
            #expect(run.stdout.contains("ERROR=0"))
        }
    }

    @Test("nightly: import, close stale, purge old, stats and the report file")
    func nightly() throws {
        let folder = try workspace()
        // One job at a time: close_stale (written first) then runs before purge_old, so the counts are exact.
        let run = try Batchrun.run(["jobs/nightly.yaml", "--report", "out/report.json", "--jobs", "1"], in: folder.url)
        #expect(run.status == 0, "\(run.stdout)\n\(run.stderr)")

        let feed = try feedSessions()
        let kept = feed.filter { $0.startedAt >= "2020-01-01" }
        let store = try StoreInspector(path: folder.path("var/nightly.sqlite"))
        #expect(try store.journalMode() == "wal")
        #expect(try store.count("SELECT count(*) FROM Session") == kept.count)
        #expect(try store.count("SELECT count(*) FROM Session WHERE started_at < '2020-01-01'") == 0)
        let stale = kept.filter { $0.status == "open" && $0.startedAt < "2026-01-01" }
        #expect(try store.count("SELECT count(*) FROM Session WHERE status = 'stale'") == stale.count)
        #expect(try store.count("SELECT count(*) FROM Session WHERE duration IS NULL")
                == kept.filter { $0.duration == nil }.count)
        // batchrun adds nothing to user tables and keeps only declared tables plus its own.
        let tables = try store.strings("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        #expect(tables == ["Session", "_batchrun_jobs", "_batchrun_parts", "_batchrun_progress", "_batchrun_runs"])
        #expect(try store.strings("SELECT name FROM pragma_table_info('Session') ORDER BY cid")
                == ["id", "user", "started_at", "duration", "status"])

        // The report: the 20 longest sessions above the stale average, longest first.
        let staleDurations = stale.compactMap(\.duration)
        let average = staleDurations.reduce(0, +) / Double(staleDurations.count)
        let csv = try String(contentsOfFile: folder.path("reports/longest.csv"), encoding: .utf8)
        let lines = csv.split(separator: "\n")
        #expect(lines.first == "user,duration")
        #expect(lines.count == 21)
        let durations = lines.dropFirst().map { Double($0.split(separator: ",")[1])! }
        #expect(durations == durations.sorted(by: >))
        #expect(durations.allSatisfy { $0 > average })
        #expect(durations.first == kept.compactMap(\.duration).max())

        // The hook ran with the job's status.
        #expect(run.stdout.contains("stats finished with ok"))

        // The JSON report follows the contract's schema.
        let json = try folder.json("out/report.json")
        #expect(json["schema"] as? Int == 1)
        #expect(json["status"] as? String == "ok")
        #expect((json["conflicts"] as? [Any])?.isEmpty == true)
        let jobs = json["jobs"] as! [[String: Any]]
        #expect(jobs.map { $0["name"] as! String } == ["import_sessions", "close_stale", "purge_old", "stats", "report"])
        let imported = jobs[0]
        #expect((imported["rows"] as! [String: Int])["inserted"] == feed.count)
        #expect((imported["batches"] as! [String: Int])["committed"] == (feed.count + 499) / 500)
        #expect(imported["error"] is NSNull)
        #expect((jobs[1]["rows"] as! [String: Int])["updated"]
                == feed.filter { $0.status == "open" && $0.startedAt < "2026-01-01" }.count)
        #expect((jobs[2]["rows"] as! [String: Int])["deleted"] == feed.count - kept.count)
        #expect((jobs[3]["needs"] as! [String]) == ["close_stale", "purge_old"])
        for key in ["queued_s", "run_s", "attempts", "skipped_because", "steps", "conflicts", "status"] {
            #expect(imported[key] != nil, "job entry lacks \(key)")
        }
    }

    @Test("nightly runs again on the same store: the import merges, nothing fails")
    func nightlyTwice() throws {
        let folder = try workspace()
        try Batchrun.run(["jobs/nightly.yaml"], in: folder.url)
        let second = try Batchrun.run(["jobs/nightly.yaml"], in: folder.url)
        #expect(second.status == 0, "\(second.stdout)\n\(second.stderr)")
        let kept = try feedSessions().filter { $0.startedAt >= "2020-01-01" }
        #expect(try StoreInspector(path: folder.path("var/nightly.sqlite")).count("SELECT count(*) FROM Session") == kept.count)
    }

    @Test("--param overrides a file param")
    func paramOverride() throws {
        let folder = try workspace()
        let run = try Batchrun.run(["jobs/nightly.yaml", "--param", "cutoff=2021-01-01"], in: folder.url)
        #expect(run.status == 0)
        let stale = try feedSessions().filter { $0.startedAt >= "2020-01-01" && $0.status == "open" && $0.startedAt < "2021-01-01" }
        #expect(try StoreInspector(path: folder.path("var/nightly.sqlite")).count("SELECT count(*) FROM Session WHERE status = 'stale'") == stale.count)
    }

    @Test("--store puts the store elsewhere")
    func storeOverride() throws {
        let folder = try workspace()
        let run = try Batchrun.run(["jobs/nightly.yaml", "--store", "elsewhere/x.sqlite"], in: folder.url)
        #expect(run.status == 0)
        #expect(FileManager.default.fileExists(atPath: folder.path("elsewhere/x.sqlite")))
        #expect(!FileManager.default.fileExists(atPath: folder.path("var/nightly.sqlite")))
    }

    @Test("import_feeds: CSV, TSV, NDJSON and JSON feeds land with their types")
    func importFeeds() throws {
        let folder = try workspace()
        let run = try Batchrun.run(["examples/import_feeds.yaml"], in: folder.url)
        #expect(run.status == 0, "\(run.stdout)\n\(run.stderr)")
        let store = try StoreInspector(path: folder.path("var/feeds.sqlite"))
        let users = try String(contentsOf: Batchrun.packageRoot.appendingPathComponent("examples/data/users.ndjson"), encoding: .utf8)
            .split(separator: "\n")
        #expect(try store.count("SELECT count(*) FROM User") == users.count)
        #expect(try store.count("SELECT count(*) FROM User WHERE newsletter = 1") == users.filter { $0.contains("\"newsletter\": true") }.count)
        #expect(try store.count("SELECT count(*) FROM User WHERE typeof(newsletter) <> 'integer'") == 0)
        #expect(try store.count("SELECT count(*) FROM Goal") == 50)
        #expect(try store.count("SELECT count(*) FROM Goal WHERE typeof(minutes) = 'integer' AND minutes > 0") == 50)
        let moods = try JSONSerialization.jsonObject(with: Data(contentsOf: Batchrun.packageRoot.appendingPathComponent("examples/data/moods.json"))) as! [[String: Any]]
        #expect(try store.count("SELECT count(*) FROM Mood") == moods.count)
        #expect(try store.count("SELECT count(*) FROM Mood WHERE note IS NULL") == moods.filter { $0["note"] is NSNull }.count)
        let quoted = try store.strings("SELECT note FROM Mood WHERE note LIKE 'said%' LIMIT 1")
        #expect(quoted == moods.compactMap { $0["note"] as? String }.filter { $0.hasPrefix("said") }.prefix(1).map { $0 })
        #expect(try store.count("SELECT count(*) FROM Session") == (try feedSessions()).count)
        // The summary table went to standard output.
        #expect(run.stdout.contains("users  with_goal  moods  sessions"))
    }

    @Test("meditation_stats: per-user JSON and per-month NDJSON match the data")
    func meditationStats() throws {
        let folder = try workspace()
        let run = try Batchrun.run(["examples/meditation_stats.yaml", "--param", "since=2025-01-01"], in: folder.url)
        #expect(run.status == 0, "\(run.stdout)\n\(run.stderr)")
        let since = try feedSessions().filter { $0.startedAt >= "2025-01-01" }
        let perUser = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder.path("reports/per_user.json")))) as! [[String: Any]]
        #expect(perUser.count == Set(since.map(\.user)).count)
        #expect(perUser.map { $0["sessions"] as! Int }.reduce(0, +) == since.count)
        let averages = perUser.map { ($0["average"] as? Double) ?? 0 }
        #expect(averages == averages.sorted(by: >))
        let months = try String(contentsOfFile: folder.path("reports/per_month.ndjson"), encoding: .utf8).split(separator: "\n")
        #expect(months.count == Set(since.map { $0.startedAt.prefix(7) }).count)
        let overall = since.compactMap(\.duration)
        #expect(run.stdout.contains("\(overall.count)"))
    }
}
