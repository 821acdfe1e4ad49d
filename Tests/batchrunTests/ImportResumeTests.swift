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
    static func contents(_ folder: TemporaryFolder) throws -> [String: [String]] {
        var configuration = Configuration()
        configuration.busyMode = .timeout(30)
        var contents = try DatabaseQueue(path: folder.path("store.sqlite"), configuration: configuration).read { db in
            var tables: [String: [String]] = [:]
            for table in feeds.map({ $0.capitalized + "Row" }) + ["InlineRow", "Swap", "AtomicRow"] {
                tables[table] = try Row.fetchAll(db, sql: "SELECT * FROM \(table) ORDER BY id").map(\.description)
            }
            return tables
        }
        for feed in feeds.map({ "\($0)-feed" }) + ["atomic"] {
            contents[feed + ".rejected.csv"] = [try String(contentsOfFile: folder.path("data/\(feed).rejected.csv"), encoding: .utf8)]
        }
        return contents
    }

    @Test("imports killed (SIGKILL and SIGINT) at random moments and resumed until ok: the store and rejected rows equal one uninterrupted run's")
    func importsKilledAndResumed() throws {
        let reference = try TemporaryFolder(), folder = try TemporaryFolder()
        try Self.prepare(reference)
        try Self.prepare(folder)
        let uninterrupted = try Batchrun.run(["job.yaml", "--quiet", "--report", "r.json", "--jobs", "1"], in: reference.url)
        #expect(uninterrupted.status == 0, "\(uninterrupted.stdout)\(uninterrupted.stderr)")

        let runs = InterruptedRuns(folder: folder, arguments: ["job.yaml", "--quiet", "--report", "r.json", "--jobs", "1"],
                                   interruptions: 14, delay: 0.05...0.6)
        let (interruptions, endedOK) = try runs.run()
        #expect(endedOK, "the run never ended ok")
        #expect(interruptions >= 10)
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
}
