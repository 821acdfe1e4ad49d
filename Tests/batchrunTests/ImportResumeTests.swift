import Foundation
import GRDB
import Testing

/// Imports continued after SIGKILL and SIGINT from their checkpoints: every feed format, bad
/// rows skipped, inline rows, a hot swap followed by an update, an atomic job. Under the
/// `error` policy a row written twice would fail the run on its key.
@Suite("Resume, exactly once: imports")
struct ImportResumeTests {
    static let rows = 15_000
    static let feeds = ["csv", "tsv", "ndjson", "json"]

    /// Feeds of `rows` rows (every 97th row bad, CSV fields holding quotes and line breaks),
    /// a `Swap` table with old rows, and the job file.
    static func prepare(_ folder: TemporaryFolder) throws {
        try FileManager.default.createDirectory(at: folder.url.appendingPathComponent("data"), withIntermediateDirectories: true)
        func value(_ id: Int) -> String { id % 97 == 0 ? "oops" : String(Double(id) / 4) }
        func note(_ id: Int) -> String { id % 5 == 0 ? "line one\nline \"two\", \(id)" : "n\(id)" }
        func json(_ id: Int, between: String = " ") -> String {
            let v = id % 97 == 0 ? "\"oops\"" : String(Double(id) / 4)
            let text = note(id).replacingOccurrences(of: "\"", with: "\\\"").replacingOccurrences(of: "\n", with: "\\n")
            return "{\"id\": \(id),\(between)\"v\": \(v),\(between)\"note\": \"\(text)\"}"
        }
        let ids = 1...rows
        try folder.write("data/csv-feed.csv", "id,v,note\n" + ids.map { id in
            "\(id),\(value(id)),\"\(note(id).replacingOccurrences(of: "\"", with: "\"\""))\"\n"
        }.joined())
        try folder.write("data/tsv-feed.tsv", "id\tv\tnote\n" + ids.map { "\($0)\t\(value($0))\tt\($0)\n" }.joined())
        let ndjson = ids.map { json($0) + "\n" }.joined()
        try folder.write("data/ndjson-feed.ndjson", ndjson)
        try folder.write("data/atomic.ndjson", ndjson)
        try folder.write("data/json-feed.json", "[\n" + ids.map { "  " + json($0, between: "\n    ") }
            .joined(separator: ",\n") + "\n]\n")
        try folder.write("data/swap.csv", "id,v,note\n" + (1...3_000).map { "\($0),\($0),new\n" }.joined())
        let inline = (1...300).map { "{ id: \($0), v: \($0).5, note: \"i\($0)\" }" }.joined(separator: ", ")
        let columns = "columns: { id: integer primary key, v: real not null, note: text }"
        try folder.write("job.yaml", """
            version: 1
            store: store.sqlite
            entities:
            \(feeds.map { "  \($0.capitalized)Row: { \(columns) }" }.joined(separator: "\n"))
              InlineRow: { \(columns) }
              Swap: { \(columns) }
              AtomicRow: { \(columns) }
            jobs:
            \(feeds.map { """
                  \($0):
                    batch_size: 50
                    steps:
                      - insert: { entity: \($0.capitalized)Row, from: data/\($0)-feed.\($0), bad_rows: skip }
                """ }.joined(separator: "\n"))
              inline:
                batch_size: 10
                steps:
                  - insert: { entity: InlineRow, rows: [\(inline)] }
              swap:
                batch_size: 50
                steps:
                  - insert: { entity: Swap, from: data/swap.csv, replace: true }
                  - batch-update: { entity: Swap, set: { v: "v + 1" } }
              atomic:
                atomic: true
                batch_size: 50
                steps:
                  - insert: { entity: AtomicRow, from: data/atomic.ndjson, bad_rows: skip }
                  - batch-update: { entity: AtomicRow, set: { v: "v * 2" } }
            """)
        let queue = try DatabaseQueue(path: folder.path("store.sqlite"))
        try queue.write { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "CREATE TABLE Swap (id INTEGER PRIMARY KEY, v REAL NOT NULL, note TEXT)")
            for id in 1...5_000 { try db.execute(sql: "INSERT INTO Swap VALUES (?, 0, 'old')", arguments: [id]) }
        }
    }

    /// Every table's rows in key order, and the rejected-rows files, as text.
    static func contents(_ folder: TemporaryFolder, tables: [String]? = nil) throws -> [String: [String]] {
        var configuration = Configuration()
        configuration.busyMode = .timeout(30)
        var contents = try DatabaseQueue(path: folder.path("store.sqlite"), configuration: configuration).read { db in
            var found: [String: [String]] = [:]
            for table in tables ?? feeds.map({ $0.capitalized + "Row" }) + ["InlineRow", "Swap", "AtomicRow"] {
                found[table] = try Row.fetchAll(db, sql: "SELECT * FROM \(table) ORDER BY id").map(\.description)
            }
            return found
        }
        for feed in feeds.map({ "\($0)-feed" }) + ["atomic"] where tables == nil {
            contents[feed + ".rejected.csv"] = [try String(contentsOfFile: folder.path("data/\(feed).rejected.csv"), encoding: .utf8)]
        }
        return contents
    }

    @Test("imports killed (SIGKILL and SIGINT) at random moments and resumed until ok: the store and rejected rows equal one uninterrupted run's")
    func importsKilledAndResumed() throws {
        let reference = try TemporaryFolder(), folder = try TemporaryFolder()
        try Self.prepare(reference)
        try Self.prepare(folder)
        let started = Date()
        let uninterrupted = try Batchrun.run(["job.yaml", "--quiet", "--report", "r.json"], in: reference.url)
        let wholeRun = Date().timeIntervalSince(started)
        #expect(uninterrupted.status == 0, "\(uninterrupted.stdout)\(uninterrupted.stderr)")

        // The imports run at once (four jobs at a time by default).
        let runs = InterruptedRuns(folder: folder, arguments: ["job.yaml", "--quiet", "--report", "r.json"],
                                   interruptions: 14, wholeRun: wholeRun)
        let (interruptions, committed, endedOK) = try runs.run()
        #expect(endedOK, "the run never ended ok")
        #expect(interruptions >= 10)
        #expect(committed >= 6, "only \(committed) of the killed attempts had committed rows")
        let expected = try Self.contents(reference), found = try Self.contents(folder)
        #expect(expected["CsvRow"]?.count == Self.rows - Self.rows / 97 && expected["Swap"]?.count == 3_000)
        for (name, rows) in expected.sorted(by: { $0.key < $1.key }) {
            #expect(found[name] == rows, "\(name) differs")
        }
        let expectedRows = (try reference.json("r.json")["jobs"] as! [[String: Any]]).map { ($0["name"] as! String, $0["rows"] as! [String: Int]) }
        let totals = (try folder.json("r.json")["jobs"] as! [[String: Any]]).map { ($0["name"] as! String, $0["rows_total"] as! [String: Int]) }
        #expect(totals.map(\.0) == expectedRows.map(\.0))
        #expect(totals.map(\.1) == expectedRows.map(\.1))
        #expect(folder.files().filter { $0.hasSuffix(".partial") }.isEmpty)
    }

    @Test("a feed that changed since the interrupted run stops --resume before anything runs: exit 2, naming the feed; the store untouched")
    func changedFeedRefused() throws {
        let folder = try TemporaryFolder()
        try Self.prepare(folder)
        let process = Process()
        process.executableURL = Batchrun.binary
        process.arguments = ["job.yaml", "--quiet", "--select", "csv"]
        process.currentDirectoryURL = folder.url
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        var configuration = Configuration()
        configuration.busyMode = .timeout(30)
        let queue = try DatabaseQueue(path: folder.path("store.sqlite"), configuration: configuration)
        func imported() throws -> Int {
            try queue.read { db in
                try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master WHERE name = 'CsvRow'") == 1
                    ? try Int.fetchOne(db, sql: "SELECT count(*) FROM CsvRow") ?? 0 : 0
            }
        }
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, try imported() < 500 { Thread.sleep(forTimeInterval: 0.005) }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        let before = try imported()
        #expect(before > 0 && before < Self.rows - Self.rows / 97, "killed after \(before) rows")
        // The same size and time, one byte changed before the checkpoint: the hash of the part read tells.
        let path = folder.path("data/csv-feed.csv")
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let checkpoint = try queue.read { db in try String.fetchOne(db, sql: "SELECT checkpoint FROM _batchrun_progress WHERE job = 'csv'") }
        let offset = try #require(checkpoint.flatMap { $0.firstMatch(of: /"offset":(\d+)/).map { Int($0.output.1)! } })
        // Another byte whatever was there (a '9' already, where the kill landed, changed nothing: 1 run in 10).
        bytes[offset - 3] = bytes[offset - 3] == UInt8(ascii: "9") ? UInt8(ascii: "8") : UInt8(ascii: "9")
        try bytes.write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.modificationDate: attributes[.modificationDate]!], ofItemAtPath: path)
        let snapshot = try Self.contents(folder, tables: ["CsvRow"])
        let result = try Batchrun.run(["job.yaml", "--resume", "--select", "csv"], in: folder.url)
        #expect(result.status == 2)
        #expect(result.stderr.contains("data/csv-feed.csv"), "\(result.stderr)")
        #expect(result.stderr.contains("nothing was run"), "\(result.stderr)")
        #expect(try Self.contents(folder, tables: ["CsvRow"]) == snapshot)
        #expect(try queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM _batchrun_runs") } == 1)
    }
}
