import Foundation
import GRDB
import Testing

/// Conflicts as users see them: the text report, the JSON report, and two batchrun
/// processes writing the same store at once.
@Suite("Conflict reports")
struct ConflictReportTests {
    @Test("constraint conflicts: counts per job, entity, kind and outcome, the first N per property, all in JSON")
    func constraintConflicts() throws {
        let folder = try TemporaryFolder()
        let queue = try DatabaseQueue(path: folder.path("store.sqlite"))
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE Session (id INTEGER PRIMARY KEY, user TEXT NOT NULL, minutes REAL)")
            try db.execute(sql: "INSERT INTO Session VALUES (1, 'ann', 10), (2, 'bob', NULL)")
        }
        try folder.write("job.yaml", """
            version: 1
            store: store.sqlite
            entities:
              Session:
                columns: { id: integer primary key, user: text not null, minutes: real }
            jobs:
              first:
                merge_policy: object-trump
                steps:
                  - insert: { entity: Session, rows: [{ id: 1, user: ann, minutes: 11 }, { id: 2, user: bob, minutes: 7 }, { id: 3, user: cy, minutes: 1 }] }
              second:
                needs: first
                merge_policy: store-trump
                steps:
                  - insert: { entity: Session, rows: [{ id: 3, user: cy, minutes: 99 }] }
            """)
        let result = try Batchrun.run(["job.yaml", "--report", "r.json", "--conflicts", "2"], in: folder.url)
        #expect(result.status == 0, "\(result.stdout)")
        #expect(result.stdout.contains("""
            conflicts: 3
              job     entity   kind        outcome     count
              first   Session  constraint  kept_ours       2
              second  Session  constraint  kept_store      1
            """), "\(result.stdout)")
        #expect(result.stdout.contains("first 2 of 3 (--conflicts N for more; the JSON report has all):"))
        #expect(result.stdout.contains("""
              job    entity   key   kind        outcome    changed by        property  original  store  ours  resolved
              first  Session  id=1  constraint  kept_ours  outside this run  minutes   NULL      10.0   11.0  11.0
              first  Session  id=2  constraint  kept_ours  outside this run  minutes   NULL      NULL   7.0   7.0
            """), "\(result.stdout)")
        #expect(result.stdout.contains("[2/2] OK    second .......................... [inserted 0 · 1 conflict in"))
        let report = try folder.json("r.json")
        let conflicts = report["conflicts"] as! [[String: Any]]
        #expect(conflicts.count == 3)
        let last = conflicts[2]
        #expect(last["job"] as? String == "second" && last["changed_by"] as? String == "first")
        #expect(last["key"] as? [String: Int] == ["id": 3])
        let property = (last["properties"] as! [[String: Any]])[0]
        #expect(property["name"] as? String == "minutes" && property["original"] is NSNull)
        #expect(property["store"] as? Double == 1 && property["ours"] as? Double == 99 && property["resolved"] as? Double == 1)
        let jobs = report["jobs"] as! [[String: Any]]
        #expect(jobs.map { $0["conflicts"] as! Int } == [2, 1])
    }

    @Test("two batchrun processes incrementing the same rows under recompute lose nothing")
    func twoProcesses() throws {
        let folder = try TemporaryFolder()
        let queue = try DatabaseQueue(path: folder.path("store.sqlite"))
        let rows = 200
        try queue.write { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "CREATE TABLE Counter (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)")
            for id in 1...rows { try db.execute(sql: "INSERT INTO Counter VALUES (?, 0)", arguments: [id]) }
        }
        let steps = String(repeating: "      - batch-update: { entity: Counter, set: { n: \"n + 1\" } }\n", count: 5)
        try folder.write("job.yaml", """
            version: 1
            store: { sqlite: store.sqlite, busy_timeout: 30s }
            entities:
              Counter:
                columns: { id: integer primary key, n: integer not null }
            jobs:
              bump:
                merge_policy: recompute
                batch_size: 9
                steps:
            \(steps)
            """)
        let processes = (0..<2).map { _ in
            let process = Process()
            process.executableURL = Batchrun.binary
            process.arguments = ["job.yaml", "--quiet"]
            process.currentDirectoryURL = folder.url
            process.standardOutput = FileHandle.nullDevice
            return process
        }
        for process in processes { try process.run() }
        for process in processes { process.waitUntilExit() }
        #expect(processes.map(\.terminationStatus) == [0, 0])
        let (sum, low) = try queue.read { db in
            (try Int.fetchOne(db, sql: "SELECT sum(n) FROM Counter")!, try Int.fetchOne(db, sql: "SELECT min(n) FROM Counter")!)
        }
        #expect(sum == rows * 10)
        #expect(low == 10)
    }

    @Test("a constraint conflict under error fails the job and is in the line, the counts, the conflict report and the JSON")
    func constraintConflictThatFailed() throws {
        let folder = try TemporaryFolder()
        try folder.write("job.yaml", """
            version: 1
            store: store.sqlite
            entities:
              T:
                columns: { id: integer primary key, v: text }
            jobs:
              load:
                steps:
                  - insert: { entity: T, rows: [{ id: 1, v: a }] }
              again:
                needs: load
                steps:
                  - insert: { entity: T, rows: [{ id: 1, v: b }] }
            """)
        let result = try Batchrun.run(["job.yaml", "--report", "r.json", "--no-progress"], in: folder.url)
        #expect(result.status == 1)
        #expect(result.stdout.contains("[2/2] ERROR again ........................... [inserted 0 · 1 conflict, failed in "), "\(result.stdout)")
        let row = result.stdout.split(separator: "\n").first { $0.hasPrefix("again  failed ") }
        #expect(row?.hasSuffix("        0         0        0        0        0          1") == true, "\(result.stdout)")
        #expect(result.stdout.contains("""
            conflicts: 1
              job    entity  kind        outcome  count
              again  T       constraint  failed       1
            """), "\(result.stdout)")
        #expect(result.stdout.contains("  again  T       id=1  constraint  failed   load        v         NULL      'a'    'b'   'a'"),
                "\(result.stdout)")
        let report = try folder.json("r.json")
        let conflicts = report["conflicts"] as! [[String: Any]]
        #expect(conflicts.count == 1)
        #expect(conflicts.first?["outcome"] as? String == "failed" && conflicts.first?["policy"] as? String == "error")
        #expect(conflicts.first?["kind"] as? String == "constraint" && conflicts.first?["changed_by"] as? String == "load")
        let jobs = report["jobs"] as! [[String: Any]]
        #expect(jobs.map { $0["conflicts"] as! Int } == [0, 1])
        #expect(jobs[1]["status"] as? String == "failed")
    }

    @Test("an optimistic conflict under error in a batch-update (another program wrote the row meanwhile) is reported as failed")
    func optimisticConflictThatFailed() throws {
        let folder = try TemporaryFolder()
        // The other program waits for the run's write lock rather than failing at once: on a busy
        // machine its write can meet the run's save ("database is locked" at BEGIN IMMEDIATE).
        var configuration = Configuration()
        configuration.busyMode = .timeout(120)
        let queue = try DatabaseQueue(path: folder.path("store.sqlite"), configuration: configuration)
        try queue.write { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "CREATE TABLE T (id INTEGER PRIMARY KEY, v TEXT)")
            for id in 1...80 { try db.execute(sql: "INSERT INTO T VALUES (?, 'a')", arguments: [id]) }
        }
        // The set expression reads a cross product of the table (~10⁷ rows), so the batch's read
        // takes long enough for another program to change row 1 before the save.
        try folder.write("job.yaml", """
            version: 1
            store: store.sqlite
            entities:
              T:
                columns: { id: integer primary key, v: text }
            jobs:
              bump:
                steps:
                  - batch-update:
                      entity: T
                      where: "id = 1"
                      set: { v: "(SELECT count(*) FROM T a, T b, T c, T d WHERE a.id > 0) || 'x'" }
            """)
        // The other program's write must fall inside the batch's read: on a busy machine the run
        // may not have begun reading after a fixed pause, so a try that met no conflict (the
        // write before the read or after the save) is tried again with another pause.
        var met: (status: Int32, stdout: String)?
        for pause in [0.4, 0.8, 1.6, 0.2, 3.2] where met == nil {
            try queue.write { db in try db.execute(sql: "UPDATE T SET v = 'a' WHERE id = 1") }
            try? FileManager.default.removeItem(atPath: folder.path("r.json"))
            let process = Process()
            process.executableURL = Batchrun.binary
            process.arguments = ["job.yaml", "--report", "r.json", "--no-progress"]
            process.currentDirectoryURL = folder.url
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            Thread.sleep(forTimeInterval: pause)
            try queue.write { db in try db.execute(sql: "UPDATE T SET v = 'outside' WHERE id = 1") }
            let stdout = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            if process.terminationStatus != 0 { met = (process.terminationStatus, stdout) }   // a conflict fails the run; checked below
        }
        guard let (status, stdout) = met else {
            Issue.record("the outside write never fell inside the batch's read in five tries")
            return
        }
        #expect(status == 1, "\(stdout)")
        #expect(stdout.contains("[1/1] ERROR bump ............................ [updated 0 · 1 conflict, failed in "), "\(stdout)")
        #expect(stdout.contains("""
              job   entity  kind        outcome  count
              bump  T       optimistic  failed       1
            """), "\(stdout)")
        let report = try folder.json("r.json")
        let conflicts = report["conflicts"] as! [[String: Any]]
        #expect(conflicts.map { $0["outcome"] as? String } == ["failed"])
        #expect(conflicts.first?["changed_by"] as? String == "outside this run")
        #expect((report["jobs"] as! [[String: Any]]).map { $0["conflicts"] as! Int } == [1])
        #expect(try queue.read { db in try String.fetchOne(db, sql: "SELECT v FROM T WHERE id = 1") } == "outside")
    }
}
