import Foundation
import GRDB
import Testing

/// The command line contract (JOBFILE.md section 7): statuses, queues, reports, plan, overrides.
@Suite("Command line")
struct CommandLineTests {
    static let model = """
        version: 1
        store: store.sqlite
        entities:
          Session:
            columns:
              id: integer primary key
              user: text not null
              duration: real

        """

    @Test("a failing job exits 1, skips what needs it, keeps committed batches, and the report says why")
    func failingJob() throws {
        let folder = try TemporaryFolder()
        try folder.write("data.csv", "id,user,duration\n1,ann,10\n2,bob,12.5\n3,cy,abc\n4,dee,3\n")
        try folder.write("job.yaml", Self.model + """
            jobs:
              load:
                batch_size: 1
                steps:
                  - insert: { entity: Session, from: data.csv }
              after_load:
                needs: load
                steps:
                  - delete: { entity: Session, where: all }
              after_after:
                needs: after_load
                on_complete: "echo hook $BATCHRUN_JOB $BATCHRUN_STATUS > hook-$BATCHRUN_JOB.txt"
                steps:
                  - fetch: { entity: Session }
              independent:
                steps:
                  - fetch: { entity: Session, select: { n: "count(*)" } }
            """)
        let result = try Batchrun.run(["job.yaml", "--report", "report.json", "--jobs", "1"], in: folder.url)
        #expect(result.status == 1)
        #expect(result.stdout.contains(#"data.csv:4: column duration: "abc" is not a real"#), "\(result.stdout)")
        // The two batches before the bad row stay committed; nothing after it was written.
        let store = try StoreInspector(path: folder.path("store.sqlite"))
        #expect(try store.count("SELECT count(*) FROM Session") == 2)
        let report = try folder.json("report.json")
        #expect(report["status"] as? String == "failed")
        let jobs = Dictionary(uniqueKeysWithValues: (report["jobs"] as! [[String: Any]]).map { ($0["name"] as! String, $0) })
        #expect(jobs["load"]?["status"] as? String == "failed")
        #expect((jobs["load"]?["rows"] as? [String: Int])?["inserted"] == 2)
        #expect((jobs["load"]?["batches"] as? [String: Int])?["committed"] == 2)
        #expect((jobs["load"]?["error"] as? String)?.contains("is not a real") == true)
        #expect(jobs["after_load"]?["status"] as? String == "skipped")
        #expect(jobs["after_load"]?["skipped_because"] as? String == "load failed")
        #expect(jobs["after_after"]?["status"] as? String == "skipped")
        #expect(jobs["after_after"]?["skipped_because"] as? String == "after_load skipped")
        #expect(jobs["independent"]?["status"] as? String == "ok")
        // on_complete runs for a job skipped before it started.
        #expect(try String(contentsOfFile: folder.path("hook-after_after.txt"), encoding: .utf8) == "hook after_after skipped\n")
        #expect(result.stdout.contains("Done in") && result.stdout.contains("ERROR=1") && result.stdout.contains("SKIP=2"))
    }

    @Test("a job file whose table cannot get a declared column (not null, no default, rows there) stops before any job, changing nothing")
    func schemaMismatch() throws {
        let folder = try TemporaryFolder()
        let queue = try DatabaseQueue(path: folder.path("store.sqlite"))
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE Session (id INTEGER PRIMARY KEY, duration REAL, extra TEXT)")
            try db.execute(sql: "INSERT INTO Session (id, duration) VALUES (7, 1.5)")
        }
        try folder.write("job.yaml", Self.model + """
              Other:
                columns: { id: integer primary key }
            jobs:
              add:
                steps:
                  - insert: { entity: Session, rows: [{ id: 1, user: ann }] }
            """)
        let result = try Batchrun.run(["job.yaml"], in: folder.url)
        #expect(result.status == 2)
        #expect(result.stderr.contains("Session: cannot add column user text not null: the table Session has rows"), "\(result.stderr)")
        #expect(result.stderr.contains("give it a default"), "\(result.stderr)")
        #expect(!result.stdout.contains("START"))
        let (rows, otherExists, columns) = try queue.read { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM Session"), try db.tableExists("Other"), try db.columns(in: "Session").map(\.name))
        }
        #expect(rows == 1)
        #expect(!otherExists)
        #expect(columns == ["id", "duration", "extra"])
    }

    @Test("several files run as a queue, one report per file in the --report folder, worst status wins")
    func queue() throws {
        let folder = try TemporaryFolder()
        try folder.write("first.yaml", Self.model + """
            jobs:
              add:
                steps:
                  - insert: { entity: Session, rows: [{ id: 1, user: ann, duration: 5 }, { id: 2, user: bob }] }
            """)
        try folder.write("second.yaml", Self.model + """
            jobs:
              bad:
                steps:
                  - insert: { entity: Session, rows: [{ id: 1, user: again }] }
            """)
        let result = try Batchrun.run(["run", "first.yaml", "second.yaml", "--report", "reports"], in: folder.url)
        #expect(result.status == 1)
        let first = result.stdout.range(of: "== first.yaml")
        let second = result.stdout.range(of: "== second.yaml")
        #expect(first != nil && second != nil && first!.lowerBound < second!.lowerBound)
        #expect(result.stdout.contains("inline row 1: constraint conflict under merge policy error: Session(1) already exists"), "\(result.stdout)")
        #expect(folder.files().filter { $0.hasPrefix("reports/") } == ["reports/first.json", "reports/second.json"])
        let secondReport = try folder.json("reports/second.json")
        #expect(secondReport["status"] as? String == "failed")
        #expect(secondReport["file"] as? String == "second.yaml")
    }

    @Test("plan shows waves as text, dot and json")
    func plan() throws {
        let folder = try TemporaryFolder()
        try folder.write("job.yaml", Self.model + """
            jobs:
              a: { description: first of all, steps: [{ fetch: { entity: Session } }] }
              b: { needs: a, steps: [{ fetch: { entity: Session } }] }
              c: { needs: a, steps: [{ fetch: { entity: Session } }] }
              d: { needs: [b, c], steps: [{ fetch: { entity: Session } }] }
            """)
        let text = try Batchrun.run(["plan", "job.yaml"], in: folder.url)
        #expect(text.status == 0)
        #expect(text.stdout.contains("wave 1: a\n"))
        #expect(text.stdout.contains("wave 2: b, c\n"))
        #expect(text.stdout.contains("wave 3: d\n"))
        #expect(text.stdout.contains("first of all"))
        #expect(text.stdout.contains("d  (needs b, c)"))
        let dot = try Batchrun.run(["plan", "job.yaml", "--format", "dot"], in: folder.url)
        #expect(dot.stdout.hasPrefix("digraph batchrun {"))
        #expect(dot.stdout.contains(#""b" -> "d";"#) && dot.stdout.contains(#""a" -> "c";"#))
        let json = try Batchrun.run(["plan", "job.yaml", "--format", "json"], in: folder.url)
        let document = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as! [String: Any]
        #expect(document["waves"] as? [[String]] == [["a"], ["b", "c"], ["d"]])
        #expect(!FileManager.default.fileExists(atPath: folder.path("store.sqlite")), "plan must not create the store")
    }

    @Test("bad command lines exit 2; --help and --version exit 0")
    func commandLineErrors() throws {
        let folder = try TemporaryFolder()
        #expect(try Batchrun.run(["--version"], in: folder.url).status == 0)
        let help = try Batchrun.run(["--help"], in: folder.url)
        #expect(help.status == 0 && help.stdout.contains("check") && help.stdout.contains("plan"))
        let helpCommand = try Batchrun.run(["help", "run"], in: folder.url)
        #expect(helpCommand.status == 0 && helpCommand.stdout.contains("--resume"), "\(helpCommand.stderr)")
        #expect(try Batchrun.run(["run", "x.yaml", "--no-such-flag"], in: folder.url).status == 2)
        #expect(try Batchrun.run(["run", "x.yaml", "--jobs", "0"], in: folder.url).status == 2)
        #expect(try Batchrun.run(["run", "x.yaml", "--param", "novalue"], in: folder.url).status == 2)
        let missing = try Batchrun.run(["missing.yaml"], in: folder.url)
        #expect(missing.status == 2 && missing.stderr.contains("missing.yaml: no such file"))
    }

    @Test("--version names the version, the commit it was built from and its traits")
    func versionNamesCommit() throws {
        let folder = try TemporaryFolder()
        let lines = try Batchrun.run(["--version"], in: folder.url).stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 3, "\(lines)")
        #expect(lines.first?.wholeMatch(of: /batchrun [0-9][A-Za-z0-9.+~]*/) != nil, "\(lines)")
        let git = Process()
        git.executableURL = URL(filePath: "/usr/bin/git")
        git.arguments = ["-C", Batchrun.packageRoot.path, "rev-parse", "HEAD"]
        let output = Pipe()
        git.standardOutput = output
        try git.run()
        let head = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        git.waitUntilExit()
        #expect(lines.dropFirst().first == "commit \(head)")
        #expect(lines.last == "traits NetworkFeeds PostgreSQL")
    }

    @Test("Tab offers the job names of the file on the line after --select, and a queue folder's waiting items after cancel")
    func shellCompletion() throws {
        let folder = try TemporaryFolder()
        try folder.write("job.yaml", Self.model + """
            jobs:
              import_users: { steps: [ { fetch: { entity: Session } } ] }
              import_sessions: { steps: [ { fetch: { entity: Session } } ] }
              stats: { steps: [ { fetch: { entity: Session } } ] }
            """)
        // What the generated scripts run: ---completion COMMAND -- OPTION WORD-INDEX CURSOR WORDS...
        let select = try Batchrun.run(["---completion", "run", "--", "--select", "4", "3",
                                       "batchrun", "run", "job.yaml", "--select", "imp"], in: folder.url)
        #expect(select.stdout.split(separator: "\n").sorted() == ["import_sessions", "import_users"], "\(select.stderr)")
        let needs = try Batchrun.run(["---completion", "run", "--", "--exclude", "4", "2",
                                      "batchrun", "run", "job.yaml", "--exclude", "+s"], in: folder.url)
        #expect(needs.stdout == "+stats\n")
        #expect(try Batchrun.run(["submit", "queue", "job.yaml"], in: folder.url).status == 0)
        let waiting = try FileManager.default.contentsOfDirectory(atPath: folder.path("queue/pending"))
        let items = try Batchrun.run(["---completion", "cancel", "--", "positional@1", "3", "0",
                                      "batchrun", "cancel", "queue", ""], in: folder.url)
        #expect(items.stdout.split(separator: "\n").map(String.init) == waiting && waiting.count == 1, "\(items.stderr)")
        // A folder that is not a queue is only read: Tab makes no queue folders in it.
        try FileManager.default.createDirectory(atPath: folder.path("plain"), withIntermediateDirectories: true)
        let none = try Batchrun.run(["---completion", "cancel", "--", "positional@1", "3", "0",
                                     "batchrun", "cancel", "plain", ""], in: folder.url)
        #expect(none.stdout.isEmpty && none.status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path("plain")).isEmpty)
    }

    @Test("bad_rows: skip writes the rejected rows with their reasons and counts them")
    func badRowsSkip() throws {
        let folder = try TemporaryFolder()
        try folder.write("feed.csv", "id,user,duration\n1,ann,10\n2,,12\n3,cy,abc\n4,dee,3\n")
        try folder.write("job.yaml", Self.model + """
            jobs:
              load:
                steps:
                  - insert: { entity: Session, from: feed.csv, bad_rows: skip }
            """)
        let result = try Batchrun.run(["job.yaml", "--report", "r.json"], in: folder.url)
        #expect(result.status == 0, "\(result.stdout)")
        #expect(try StoreInspector(path: folder.path("store.sqlite")).strings("SELECT user FROM Session ORDER BY id") == ["ann", "dee"])
        let rejected = try String(contentsOfFile: folder.path("feed.rejected.csv"), encoding: .utf8)
        #expect(rejected == """
            line,reason,id,user,duration
            3,column user: missing value in a not null column,2,,12
            4,"column duration: ""abc"" is not a real",3,cy,abc

            """)
        let report = try folder.json("r.json")
        let rows = (report["jobs"] as! [[String: Any]])[0]["rows"] as! [String: Int]
        #expect(rows["rejected"] == 2 && rows["inserted"] == 2)
    }

    @Test("feed fields that match no column are an error naming them")
    func unknownFeedFields() throws {
        let folder = try TemporaryFolder()
        try folder.write("feed.csv", "id,user,colour,size\n1,ann,red,3\n")
        try folder.write("job.yaml", Self.model + """
            jobs:
              load:
                steps:
                  - insert: { entity: Session, from: feed.csv }
            """)
        let result = try Batchrun.run(["job.yaml"], in: folder.url)
        #expect(result.status == 1)
        #expect(result.stdout.contains("feed.csv:1: fields colour, size match no column of Session"), "\(result.stdout)")
    }

    @Test("an atomic job that fails leaves nothing of itself in the store")
    func atomicRollback() throws {
        let folder = try TemporaryFolder()
        try folder.write("job.yaml", Self.model + """
            jobs:
              all_or_nothing:
                atomic: true
                batch_size: 1
                steps:
                  - insert: { entity: Session, rows: [{ id: 1, user: ann }, { id: 2, user: bob }] }
                  - delete: { entity: Session, where: "id = 1" }
                  - insert: { entity: Session, rows: [{ id: 2, user: duplicate }] }
            """)
        let result = try Batchrun.run(["job.yaml", "--report", "r.json"], in: folder.url)
        #expect(result.status == 1)
        #expect(try StoreInspector(path: folder.path("store.sqlite")).count("SELECT count(*) FROM Session") == 0)
        let report = try folder.json("r.json")
        let job = (report["jobs"] as! [[String: Any]])[0]
        #expect((job["rows"] as! [String: Int])["inserted"] == 0)
        #expect((job["batches"] as! [String: Int])["committed"] == 0)
    }

    @Test("constraint conflicts on insert follow the merge policy")
    func insertPolicies() throws {
        let expected: [(policy: String, users: [String], durations: [Double?])] = [
            ("store-trump", ["ann", "bob"], [10, 7]),        // existing kept; only its NULL filled
            ("object-trump", ["ann2", "bob2"], [11, 7]),     // existing updated with the feed's columns
            ("overwrite", ["ann2", "bob2"], [11, 7]),        // replaced whole
            ("rollback", ["ann", "bob"], [10, nil]),          // feed row dropped
        ]
        for (policy, users, durations) in expected {
            let folder = try TemporaryFolder()
            try folder.write("job.yaml", Self.model + """
                jobs:
                  first:
                    steps:
                      - insert: { entity: Session, rows: [{ id: 1, user: ann, duration: 10 }, { id: 2, user: bob }] }
                  second:
                    needs: first
                    merge_policy: \(policy)
                    steps:
                      - insert: { entity: Session, rows: [{ id: 1, user: ann2, duration: 11 }, { id: 2, user: bob2, duration: 7 }] }
                """)
            let result = try Batchrun.run(["job.yaml"], in: folder.url)
            #expect(result.status == 0, "\(policy): \(result.stdout)")
            let store = try StoreInspector(path: folder.path("store.sqlite"))
            let rows = try store.queue.read { db in try Row.fetchAll(db, sql: "SELECT user, duration FROM Session ORDER BY id") }
            #expect(rows.map { $0["user"] as String } == users, "\(policy)")
            #expect(rows.map { $0["duration"] as Double? } == durations, "\(policy)")
        }
    }

    @Test("fetch output '-' prints a table on standard output")
    func tableOutput() throws {
        let folder = try TemporaryFolder()
        try folder.write("job.yaml", Self.model + """
            jobs:
              add:
                steps:
                  - insert: { entity: Session, rows: [{ id: 1, user: ann, duration: 5 }, { id: 2, user: bob }] }
                  - fetch: { entity: Session, select: [user, duration], order_by: [user], output: "-" }
            """)
        let result = try Batchrun.run(["job.yaml"], in: folder.url)
        #expect(result.stdout.contains("user  duration\n----  --------\nann   5.0\nbob   NULL\n(2 rows)\n"), "\(result.stdout)")
    }

    @Test("off a terminal the output has no control characters")
    func noControlCharacters() throws {
        let folder = try TemporaryFolder()
        try folder.write("job.yaml", Self.model + """
            jobs:
              add: { merge_policy: overwrite, steps: [{ insert: { entity: Session, rows: [{ id: 1, user: ann }] } }] }
            """)
        let result = try Batchrun.run(["job.yaml"], in: folder.url, environment: ["NO_COLOR": ""])
        #expect(!result.stdout.contains("\u{1B}"))
        #expect(result.stdout.contains("[1/1] OK    add"))
        let colored = try Batchrun.run(["job.yaml", "--color", "always"], in: folder.url)
        #expect(colored.stdout.contains("\u{1B}[32m"))
    }
}
