import Foundation
import GRDB
import Testing
import TestSupport

/// Schema changes (JOBFILE.md section 13), end to end on real SQLite files and a throwaway
/// PostgreSQL server: yesterday's store runs today's job file. Columns added (defaults filled),
/// renamed with their data, indexes and uniques created, each change printed, counted in the
/// report and recorded once in `_batchrun_schema`; refusals that change nothing; `check` and
/// `plan` previews; `--no-schema-changes`; two runs at once; a kill -9 inside the transaction.
@Suite("Schema changes")
struct SchemaChangeTests {
    enum Backend: String, CaseIterable, CustomTestStringConvertible {
        case sqlite, postgres
        var testDescription: String { rawValue }

        /// A new, empty store: an SQLite path in `folder`, or a new database's URL.
        func newStore(in folder: TemporaryFolder) throws -> String {
            switch self {
            case .sqlite: folder.path("store.sqlite")
            case .postgres: try PostgresServer.database("schema")
            }
        }

        /// The rows of `sql`, each as its values joined by `|` (NULL empty), as `psql -A -t` prints them.
        func query(_ store: String, _ sql: String) throws -> [String] {
            switch self {
            case .sqlite:
                guard FileManager.default.fileExists(atPath: store) else { return [] }
                return try DatabaseQueue(path: store).read { db in
                    try Row.fetchAll(db, sql: sql).map { row in
                        row.databaseValues.map { value -> String in
                            switch value.storage {
                            case .null: ""
                            case .int64(let number): "\(number)"
                            case .double(let number): "\(number)"
                            case .string(let text): text
                            case .blob(let data): "\(data.count) bytes"
                            }
                        }.joined(separator: "|")
                    }
                }
            case .postgres:
                let text = try PostgresServer.psql(store, sql)
                return text.isEmpty ? [] : text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            }
        }

        func execute(_ store: String, _ sql: String) throws {
            switch self {
            case .sqlite: try DatabaseQueue(path: store).write { db in try db.execute(sql: sql) }
            case .postgres: try PostgresServer.psql(store, sql)
            }
        }

        /// A table's column names, in order.
        func columns(_ store: String, _ table: String) throws -> [String] {
            switch self {
            case .sqlite: try query(store, "SELECT name FROM pragma_table_info('\(table)')")
            case .postgres: try query(store, "SELECT attname FROM pg_attribute WHERE attrelid = '\(table.lowercased())'::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum")
            }
        }

        func hasHistory(_ store: String) throws -> Bool {
            switch self {
            case .sqlite: try query(store, "SELECT count(*) FROM sqlite_master WHERE name = '_batchrun_schema'") == ["1"]
            case .postgres: try query(store, "SELECT count(*) FROM pg_tables WHERE tablename = '_batchrun_schema'") == ["1"]
            }
        }
    }

    /// Version 1: Person(id, name, email), three people; `insert` adds them.
    static func version1(_ store: String) -> String {
        """
        version: 1
        store: \(store.hasPrefix("postgresql://") ? "{ postgres: \"\(store)\" }" : "\"\(store)\"")
        entities:
          Person:
            columns:
              id: integer primary key
              name: text
              email: text
        jobs:
          add:
            steps:
              - insert:
                  entity: Person
                  rows:
                    - { id: 1, name: ann, email: a@x }
                    - { id: 2, name: bob, email: b@x }
                    - { id: 3, name: cy, email: c@x }

        """
    }

    /// Version 2: `name` renamed `full_name`, `score` (default 1.5), `note`, `active` (not null
    /// default true) added, a unique on email and an index on score; its job uses them.
    static func version2(_ store: String, top: String = "", person extra: String = "") -> String {
        """
        version: 1
        store: \(store.hasPrefix("postgresql://") ? "{ postgres: \"\(store)\" }" : "\"\(store)\"")
        \(top)
        entities:
          Person:
            columns:
              id: integer primary key
              full_name: text was name
              email: text
              score: real default 1.5
              note: text
              active: boolean not null default true
        \(extra)
            unique: [[email]]
            indexes: [[score]]
        jobs:
          more:
            steps:
              - insert: { entity: Person, rows: [{ id: 4, full_name: dee, email: d@x, score: 2.5, note: new }] }

        """
    }

    static let changes = [
        "Person: renamed column name to full_name",
        "Person: added column score real default 1.5",
        "Person: added column note text",
        "Person: added column active boolean not null default true",
        "Person: created unique (email)",
        "Person: created index on (score)",
    ]

    /// A store holding version 1's three people.
    func storeWithVersion1(_ backend: Backend, in folder: TemporaryFolder) throws -> String {
        let store = try backend.newStore(in: folder)
        try folder.write("v1.yaml", Self.version1(store))
        let first = try Batchrun.run(["v1.yaml"], in: folder.url)
        #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
        #expect(!first.stdout.contains("schema:"), "a new store's tables are not schema changes")
        return store
    }

    func people(_ backend: Backend, _ store: String) throws -> [String] {
        try backend.query(store, "SELECT id, full_name, email, score, note, CASE WHEN active THEN 'yes' ELSE 'no' END FROM person ORDER BY id")
    }

    @Test("a run of the new file adds, renames and indexes, prints and records each change once; the third run changes nothing",
          arguments: Backend.allCases)
    func evolves(_ backend: Backend) throws {
        let folder = try TemporaryFolder()
        let store = try storeWithVersion1(backend, in: folder)
        try folder.write("v2.yaml", Self.version2(store))
        let second = try Batchrun.run(["v2.yaml", "--report", "second.json"], in: folder.url)
        #expect(second.status == 0, "\(second.stdout)\(second.stderr)")
        let printed = second.stdout.split(separator: "\n").filter { $0.hasPrefix("schema: ") }.map { String($0.dropFirst("schema: ".count)) }
        #expect(printed == Self.changes)
        // Every row, its data through the rename and its defaults filled.
        #expect(try people(backend, store) == ["1|ann|a@x|1.5||yes", "2|bob|b@x|1.5||yes", "3|cy|c@x|1.5||yes", "4|dee|d@x|2.5|new|yes"])
        #expect(try backend.columns(store, "Person") == ["id", "full_name", "email", "score", "note", "active"])
        let report = try folder.json("second.json")
        let listed = (report["schema_changes"] as? [[String: Any]] ?? []).map { "\($0["entity"] ?? ""): \($0["change"] ?? "")" }
        #expect(listed == Self.changes)
        // The history: when, which run, which file, the statement.
        let runID = report["run_id"] as? Int ?? -1
        let history = try backend.query(store, "SELECT entity || ': ' || change, run_id, file, statement, applied_at FROM _batchrun_schema ORDER BY id")
        #expect(history.map { $0.split(separator: "|")[0] }.map(String.init) == Self.changes)
        for row in history {
            let fields = row.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            #expect(fields[1] == "\(runID)", "\(row)")
            #expect(fields[2].hasSuffix("/v2.yaml"), "\(row)")
            #expect(fields[3].hasPrefix("ALTER TABLE") || fields[3].hasPrefix("CREATE"), "\(row)")
            #expect(fields[4].hasPrefix("20"), "\(row)")
        }
        // The unique holds from now on.
        #expect(throws: (any Error).self) { try backend.execute(store, "INSERT INTO person (id, email) VALUES (9, 'a@x')") }
        // The third run finds everything made.
        try folder.write("v2.yaml", Self.version2(store).replacingOccurrences(of: "id: 4, full_name: dee, email: d@x", with: "id: 5, full_name: eve, email: e@x"))
        let third = try Batchrun.run(["v2.yaml", "--report", "third.json"], in: folder.url)
        #expect(third.status == 0, "\(third.stdout)\(third.stderr)")
        #expect(!third.stdout.contains("schema:"))
        #expect((try folder.json("third.json")["schema_changes"] as? [Any])?.isEmpty == true)
        #expect(try backend.query(store, "SELECT count(*) FROM _batchrun_schema") == ["6"])
    }

    @Test("refusals: not null without default, a unique rows break, another type, a rename that would drop; exit 2, nothing changed",
          arguments: Backend.allCases)
    func refusals(_ backend: Backend) throws {
        let folder = try TemporaryFolder()
        let store = try storeWithVersion1(backend, in: folder)
        try backend.execute(store, "UPDATE person SET email = 'a@x' WHERE id = 2")
        let before = try backend.query(store, "SELECT id, name, email FROM person ORDER BY id")
        let cases: [(file: String, messages: [String])] = [
            (Self.version2(store).replacingOccurrences(of: "unique: [[email]]", with: "unique: [[id, full_name]]")
                .replacingOccurrences(of: "note: text", with: "note: text\n      rank: integer not null"),
             ["Person: cannot add column rank integer not null: the table", "has rows", "rank: integer not null default 0"]),
            (Self.version2(store), ["Person: cannot create unique (email): 2 rows share email = 'a@x'", "remove or merge the duplicate rows"]),
            (Self.version2(store).replacingOccurrences(of: "id: integer primary key", with: "id: text primary key"),
             ["Person: column id is declared text, but the table", "stores id as \(backend == .sqlite ? "INTEGER" : "bigint")", "never changes a column's type"]),
        ]
        for (index, (text, messages)) in cases.enumerated() {
            try folder.write("v\(index).yaml", text)
            let result = try Batchrun.run(["v\(index).yaml"], in: folder.url)
            #expect(result.status == 2, "\(index): \(result.stdout)\(result.stderr)")
            for message in messages { #expect(result.stderr.contains(message), "\(index): \(result.stderr)") }
            // Each refusal is shown at its column (the entity for a unique), with the line and a caret.
            let place = [":7: error: Person: cannot add column rank", ":7: error: Person: cannot create unique", ":7: error: Person: column id is declared text"][index]
            #expect(result.stderr.contains(try Regex("v\(index).yaml:[0-9]+\(place)")), "\(index): \(result.stderr)")
            #expect(result.stderr.contains("\n      ^") || result.stderr.contains("\n  ^"), "\(index): \(result.stderr)")
            #expect(result.stderr.contains("the store's schema was not changed"), "\(index): \(result.stderr)")
            #expect(!result.stdout.contains("schema:"))
            #expect(try backend.columns(store, "Person") == ["id", "name", "email"], "\(index)")
            #expect(try backend.query(store, "SELECT id, name, email FROM person ORDER BY id") == before, "\(index)")
            #expect(try !backend.hasHistory(store), "\(index)")
        }
        // A rename that keeps the earlier column declared would drop it: the file is invalid.
        try folder.write("drop.yaml", Self.version2(store).replacingOccurrences(of: "email: text", with: "email: text\n      name: text"))
        let dropping = try Batchrun.run(["drop.yaml"], in: folder.url)
        #expect(dropping.status == 2)
        #expect(dropping.stderr.contains("column full_name says it was name, but name is still declared"), "\(dropping.stderr)")
        #expect(dropping.stderr.contains("batchrun never drops a column"), "\(dropping.stderr)")
        #expect(try backend.columns(store, "Person") == ["id", "name", "email"])
    }

    @Test("check and plan list the changes without making them; --no-schema-changes and schema_changes: refuse make them exit 2",
          arguments: Backend.allCases)
    func previewAndRefuse(_ backend: Backend) throws {
        let folder = try TemporaryFolder()
        let store = try storeWithVersion1(backend, in: folder)
        try folder.write("v2.yaml", Self.version2(store))
        let check = try Batchrun.run(["check", "v2.yaml"], in: folder.url)
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        #expect(check.stdout.contains("""
              schema changes a run would make:
                Person: rename column name to full_name
                Person: add column score real default 1.5
                Person: add column note text
                Person: add column active boolean not null default true
                Person: create unique (email)
                Person: create index on (score)
            """), "\(check.stdout)")
        let plan = try Batchrun.run(["plan", "v2.yaml"], in: folder.url)
        #expect(plan.status == 0)
        #expect(plan.stdout.contains("Person: add column score real default 1.5"), "\(plan.stdout)")
        let refused = try Batchrun.run(["v2.yaml", "--no-schema-changes"], in: folder.url)
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("schema changes are refused"), "\(refused.stderr)")
        #expect(refused.stderr.contains("  Person: add column score real default 1.5"), "\(refused.stderr)")
        try folder.write("refuse.yaml", Self.version2(store, top: "schema_changes: refuse"))
        let refusedByFile = try Batchrun.run(["refuse.yaml"], in: folder.url)
        #expect(refusedByFile.status == 2, "\(refusedByFile.stderr)")
        let checkRefused = try Batchrun.run(["check", "refuse.yaml"], in: folder.url)
        #expect(checkRefused.status == 2, "\(checkRefused.stdout)")
        #expect(try backend.columns(store, "Person") == ["id", "name", "email"])
        #expect(try !backend.hasHistory(store))
        // A check with a bad expression over a new column is still an error, a good one is not.
        try folder.write("typo.yaml", Self.version2(store).replacingOccurrences(
            of: "  more:", with: "  sum:\n    steps:\n      - fetch: { entity: Person, where: \"scor > 1\" }\n  more:"))
        #expect(try Batchrun.run(["check", "typo.yaml"], in: folder.url).status == 2)
        try folder.write("good.yaml", Self.version2(store).replacingOccurrences(
            of: "  more:", with: "  sum:\n    steps:\n      - fetch: { entity: Person, where: \"score > 1 AND full_name IS NOT NULL\" }\n  more:"))
        #expect(try Batchrun.run(["check", "good.yaml"], in: folder.url).status == 0)
        #expect(try backend.columns(store, "Person") == ["id", "name", "email"])
    }

    /// Starts `batchrun ARGUMENTS` with `environment`, its output to `log`.
    func start(_ arguments: [String], in folder: TemporaryFolder, environment: [String: String], log: String) throws -> Process {
        let process = Process()
        process.executableURL = Batchrun.binary
        process.arguments = arguments
        process.currentDirectoryURL = folder.url
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        #expect(FileManager.default.createFile(atPath: folder.path(log), contents: nil))
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: folder.path(log)))
        process.standardError = process.standardOutput
        try process.run()
        return process
    }

    func waitFor(_ path: String) {
        let deadline = Date().addingTimeInterval(120)
        while !FileManager.default.fileExists(atPath: path) && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
    }

    @Test("two runs starting together with the new file: each change made and recorded once, the second finds them made",
          arguments: Backend.allCases)
    func concurrentRuns(_ backend: Backend) throws {
        let folder = try TemporaryFolder()
        let store = try storeWithVersion1(backend, in: folder)
        try folder.write("v2.yaml", Self.version2(store))
        try folder.write("v2b.yaml", Self.version2(store).replacingOccurrences(of: "id: 4, full_name: dee, email: d@x", with: "id: 5, full_name: eve, email: e@x"))
        // The first holds its schema transaction open for a second once its changes are made;
        // the second starts then, and must wait for it rather than make them again.
        let first = try start(["v2.yaml"], in: folder, environment: ["BATCHRUN_TEST_SCHEMA_PAUSE": folder.path("inside"),
                                                                   "BATCHRUN_TEST_SCHEMA_PAUSE_SECONDS": "1"], log: "first.log")
        waitFor(folder.path("inside"))
        let second = try Batchrun.run(["v2b.yaml"], in: folder.url)
        first.waitUntilExit()
        let firstLog = try String(contentsOfFile: folder.path("first.log"), encoding: .utf8)
        #expect(first.terminationStatus == 0, "\(firstLog)")
        #expect(second.status == 0, "\(second.stdout)\(second.stderr)")
        #expect(firstLog.contains("schema: Person: added column score real default 1.5"))
        #expect(!second.stdout.contains("schema:"), "\(second.stdout)")
        #expect(try backend.query(store, "SELECT count(*), count(DISTINCT change) FROM _batchrun_schema") == ["6|6"])
        #expect(try backend.query(store, "SELECT count(*) FROM person") == ["5"])
    }

    @Test("a kill -9 inside the schema transaction leaves the old schema whole; the next run makes the changes",
          arguments: Backend.allCases)
    func killedInside(_ backend: Backend) throws {
        let folder = try TemporaryFolder()
        let store = try storeWithVersion1(backend, in: folder)
        try folder.write("v2.yaml", Self.version2(store))
        let process = try start(["v2.yaml"], in: folder, environment: ["BATCHRUN_TEST_SCHEMA_PAUSE": folder.path("inside")], log: "killed.log")
        waitFor(folder.path("inside"))
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        // PostgreSQL rolls the transaction back once it sees the connection gone.
        let deadline = Date().addingTimeInterval(30)
        while backend == .postgres && Date() < deadline,
              try backend.query(store, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'") != ["0"] {
            Thread.sleep(forTimeInterval: 0.05)
        }
        #expect(try backend.columns(store, "Person") == ["id", "name", "email"])
        #expect(try backend.query(store, "SELECT id, name, email FROM person ORDER BY id") == ["1|ann|a@x", "2|bob|b@x", "3|cy|c@x"])
        #expect(try !backend.hasHistory(store))
        let again = try Batchrun.run(["v2.yaml"], in: folder.url)
        #expect(again.status == 0, "\(again.stdout)\(again.stderr)")
        #expect(try people(backend, store) == ["1|ann|a@x|1.5||yes", "2|bob|b@x|1.5||yes", "3|cy|c@x|1.5||yes", "4|dee|d@x|2.5|new|yes"])
    }

    @Test("a queue whose items carry two versions of a file: the old one, the new one (which migrates), then the old one again (refused, naming the rename)")
    func queueWithTwoVersions() throws {
        let folder = try TemporaryFolder()
        // Items resolve relative paths against the queue folder: the store is q/store.sqlite.
        try folder.write("v1.yaml", Self.version1("store.sqlite"))
        try folder.write("v2.yaml", Self.version2("store.sqlite"))
        try folder.write("v1-again.yaml", Self.version1("store.sqlite").replacingOccurrences(
            of: "rows:\n            - { id: 1, name: ann, email: a@x }\n            - { id: 2, name: bob, email: b@x }\n            - { id: 3, name: cy, email: c@x }",
            with: "rows: [{ id: 9, name: zed, email: z@x }]"))
        let submitted = try Batchrun.run(["submit", "q", "v1.yaml", "v2.yaml", "v1-again.yaml"], in: folder.url)
        #expect(submitted.status == 0, "\(submitted.stdout)\(submitted.stderr)")
        let worker = try Batchrun.run(["worker", "q", "--once"], in: folder.url)
        #expect(worker.status == 2, "\(worker.stdout)\(worker.stderr)")
        let fm = FileManager.default
        let done = try fm.contentsOfDirectory(atPath: folder.path("q/done")).filter { $0.hasSuffix(".yaml") }.sorted()
        let failed = try fm.contentsOfDirectory(atPath: folder.path("q/failed")).filter { $0.hasSuffix(".yaml") }
        #expect(done.count == 2 && done[0].hasSuffix("-v1.yaml") && done[1].hasSuffix("-v2.yaml"), "\(done)")
        #expect(failed.count == 1 && failed[0].hasSuffix("-v1-again.yaml"), "\(failed)")
        let log = try String(contentsOfFile: folder.path("q/failed/\(failed[0]).log"), encoding: .utf8)
        #expect(log.contains("Person: column name was renamed to full_name by an earlier run of a newer job file"), "\(log)")
        let v2log = try String(contentsOfFile: folder.path("q/done/\(done[1]).log"), encoding: .utf8)
        #expect(v2log.contains("schema: Person: renamed column name to full_name"), "\(v2log)")
        let store = folder.path("q/store.sqlite")
        #expect(try Backend.sqlite.columns(store, "Person") == ["id", "full_name", "email", "score", "note", "active"])
        #expect(try people(.sqlite, store) == ["1|ann|a@x|1.5||yes", "2|bob|b@x|1.5||yes", "3|cy|c@x|1.5||yes", "4|dee|d@x|2.5|new|yes"])
        #expect(try Backend.sqlite.query(store, "SELECT count(*) FROM _batchrun_schema") == ["6"])
    }

    @Test("resume: a killed run resumed with its own file makes no change; a file changed since is migrated first, then continued exactly once")
    func resume() throws {
        let folder = try TemporaryFolder()
        try Batchrun.writeLongFeed(in: folder)
        let old = """
            version: 1
            store: store.sqlite
            entities:
              T: { columns: { id: integer primary key, minutes: real } }
            jobs:
              load: { batch_size: 500, steps: [{ insert: { entity: T, from: feed.csv } }] }

            """
        let inspector = { try StoreInspector(path: folder.path("store.sqlite")) }
        // Killed, then resumed with the file it started with: nothing to change.
        try folder.write("job.yaml", old)
        var killed = try Batchrun.startUntilRows(in: "T", folder, ["job.yaml", "--quiet"])
        kill(killed.processIdentifier, SIGKILL)
        killed.waitUntilExit()
        let same = try Batchrun.run(["job.yaml", "--resume", "--no-progress"], in: folder.url)
        #expect(same.status == 0, "\(same.stdout)\(same.stderr)")
        #expect(same.stdout.contains("resuming run 1") && !same.stdout.contains("schema:"), "\(same.stdout)")
        #expect(try inspector().count("SELECT count(*) FROM T") == 400_000)
        // Killed again in a new run, then resumed with the file changed since (a column added):
        // the change is made first, the run continues from its checkpoints, every row once.
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: folder.path("store.sqlite" + suffix)) }
        killed = try Batchrun.startUntilRows(in: "T", folder, ["job.yaml", "--quiet"])
        kill(killed.processIdentifier, SIGKILL)
        killed.waitUntilExit()
        try folder.write("job.yaml", old.replacingOccurrences(of: "minutes: real }", with: "minutes: real, source: text default 'feed' }"))
        let changed = try Batchrun.run(["job.yaml", "--resume", "--no-progress"], in: folder.url)
        #expect(changed.status == 0, "\(changed.stdout)\(changed.stderr)")
        #expect(changed.stdout.contains("schema: T: added column source text default 'feed'"), "\(changed.stdout)")
        #expect(changed.stdout.contains("resuming run 1"), "\(changed.stdout)")
        #expect(try inspector().count("SELECT count(*) FROM T") == 400_000)
        #expect(try inspector().count("SELECT count(DISTINCT id) FROM T WHERE source = 'feed'") == 400_000)
    }
}
