import Foundation
import Testing
import TestSupport

/// Issue 50: a run died of a segmentation fault after 13,760 committed batches. The run's event
/// handler, a closure kept directly in a `Mutex`, was re-wrapped in two reabstraction thunks by
/// every `withLock` that read it (once per batch), and calling it walked the chain recursively
/// until the stack ran out. Each test here commits at least 18,000 batches in one process (batches
/// of one row), a third past that, and checks that the process ends with exit 0 and every row
/// was written once. (At 50,000 batches a step these three tests held both of their test
/// process's threads for 7 minutes beside two CPU-bound processes, the last of `make test`.)
@Suite("Many batches in one process (issue 50)")
struct ManyBatchesTests {
    /// Rows, and batches of each step on SQLite: past the 13,760 batches the run of issue 50
    /// died after in one step alone, 60,000 in the run.
    static let rows = 20_000
    /// On PostgreSQL 6,000 a step, 18,001 batches in the process (a third past the 13,760, as
    /// the handler that overflowed was the run's, shared by its steps): a batch of one row there
    /// takes about 2.6 ms in a debug build (131 s alone for 50,001 batches).
    static let postgresRows = 6_000

    /// Each row's `v`, a value the sums check.
    static func value(_ id: Int) -> Int { id * 7 % 1_000 }

    /// `items.csv` in `folder` (or `q/items.csv`): `id,v` for ids 1 to `rows`.
    static func writeFeed(in folder: TemporaryFolder, at path: String = "items.csv", rows: Int = rows) throws {
        var feed = "id,v\n"
        feed.reserveCapacity(rows * 12)
        for id in 1...rows { feed += "\(id),\(value(id))\n" }
        try folder.write(path, feed)
    }

    /// What a fetch after each step writes: rows, distinct keys, the sums of `id`, `v` and `n`,
    /// and the smallest and largest `n`.
    static let totals = #"{ total_rows: "count(*)", distinct_ids: "count(DISTINCT id)", id_sum: "sum(id)", v_sum: "sum(v)", n_sum: "sum(n)", n_min: "min(n)", n_max: "max(n)" }"#

    /// One job, batches of one row: the feed inserted, then (unless `insertOnly`) every row's `n`
    /// bumped and every row deleted, with the totals written after each step.
    static func jobFile(store: String, insertOnly: Bool = false) -> String {
        var text = """
            version: 1
            store: \(store)
            entities:
              Item: { columns: { id: integer primary key, v: integer not null, n: integer not null default 0 } }
            jobs:
              many:
                batch_size: 1
                steps:
                  - insert: { entity: Item, from: items.csv }
                  - fetch: { entity: Item, select: \(totals), output: after_insert.csv }

            """
        if !insertOnly {
            text += """
                      - batch-update: { entity: Item, set: { n: "n + 1" } }
                      - fetch: { entity: Item, select: \(totals), output: after_update.csv }
                      - delete: { entity: Item, where: "v >= 0" }
                      - fetch: { entity: Item, select: \(totals), output: after_delete.csv }

                """
        }
        return text
    }

    /// A totals file (a header and one row) as column name to value; a NULL (the sums of no
    /// rows) is the empty string.
    static func totals(_ folder: TemporaryFolder, _ file: String) throws -> [String: String] {
        let lines = try String(contentsOfFile: folder.path(file), encoding: .utf8).split(separator: "\n").map(String.init)
        try #require(lines.count == 2, "\(file): \(lines)")
        let header = lines[0].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        let values = lines[1].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        return Dictionary(uniqueKeysWithValues: zip(header, values))
    }

    static func idSum(_ rows: Int = rows) -> String { String(rows * (rows + 1) / 2) }
    static func vSum(_ rows: Int = rows) -> String { String((1...rows).map(value).reduce(0, +)) }

    /// Runs the job file on `store` and checks the exit, the totals after each step and each
    /// step's committed batches in the report.
    func insertUpdateDelete(store: String, rows count: Int) throws {
        let folder = try TemporaryFolder()
        try Self.writeFeed(in: folder, rows: count)
        try folder.write("job.yaml", Self.jobFile(store: store))
        let started = Date()
        let run = try Batchrun.run(["job.yaml", "--quiet", "--report", "report.json"], in: folder.url)
        let seconds = Date().timeIntervalSince(started)
        #expect(run.status == 0 && !run.signalled, "exit \(run.status)\(run.signalled ? " (signal)" : ""): \(run.stdout.suffix(2_000))\(run.stderr.suffix(2_000))")
        try #require(run.status == 0)

        let rows = String(count)
        let (idSum, vSum) = (Self.idSum(count), Self.vSum(count))
        // Every row once after the insert, each bumped once after the update, none after the delete.
        #expect(try Self.totals(folder, "after_insert.csv") == ["total_rows": rows, "distinct_ids": rows, "id_sum": idSum, "v_sum": vSum,
                                                                "n_sum": "0", "n_min": "0", "n_max": "0"])
        #expect(try Self.totals(folder, "after_update.csv") == ["total_rows": rows, "distinct_ids": rows, "id_sum": idSum, "v_sum": vSum,
                                                                "n_sum": rows, "n_min": "1", "n_max": "1"])
        #expect(try Self.totals(folder, "after_delete.csv") == ["total_rows": "0", "distinct_ids": "0", "id_sum": "", "v_sum": "",
                                                                "n_sum": "", "n_min": "", "n_max": ""])

        let report = try folder.json("report.json")
        #expect(report["status"] as? String == "ok")
        let job = try #require((report["jobs"] as? [[String: Any]])?.first)
        #expect(job["status"] as? String == "ok")
        let steps = (job["steps"] as? [[String: Any]] ?? []).filter { $0["kind"] as? String != "fetch" }
        #expect(steps.map { $0["kind"] as? String ?? "" } == ["insert", "batch-update", "delete"])
        for (step, counted) in zip(steps, ["inserted", "updated", "deleted"]) {
            let batches = step["batches"] as? [String: Int] ?? [:]
            #expect(batches["committed"] == count && batches["rolled_back"] == 0, "\(step["kind"] ?? ""): \(batches)")
            #expect((step["rows"] as? [String: Int])?[counted] == count, "\(step["kind"] ?? ""): \(step["rows"] ?? "")")
        }
        print("ManyBatchesTests: \(count * 3) batches on \(store.contains("postgres") ? "PostgreSQL" : "SQLite") in \(String(format: "%.1f", seconds)) s; steps "
              + steps.map { "\($0["kind"] ?? "") \(String(format: "%.1f", $0["run_s"] as? Double ?? 0)) s" }.joined(separator: ", "))
    }

    @Test("SQLite: an insert, a batch-update and a delete of 20,000 batches each in one run end with exit 0, every row written once")
    func sqlite() throws {
        try insertUpdateDelete(store: "store.sqlite", rows: Self.rows)
    }

    @Test("PostgreSQL: an insert, a batch-update and a delete of 6,000 batches each (18,001 in the process) end with exit 0, every row written once")
    func postgres() throws {
        try insertUpdateDelete(store: "{ postgres: \"\(PostgresServer.database("many"))\" }", rows: Self.postgresRows)
    }

    @Test("a queue item of 20,000 batches, run by a worker's child, finishes ok and lands in done/ with every row once")
    func queueItem() throws {
        let folder = try TemporaryFolder()
        try FileManager.default.createDirectory(atPath: folder.path("q/pending"), withIntermediateDirectories: true)
        // Relative paths of an item resolve against the queue folder.
        try Self.writeFeed(in: folder, at: "q/items.csv")
        try folder.write("many.yaml", Self.jobFile(store: "var/many.sqlite", insertOnly: true))
        let submitted = try Batchrun.run(["submit", "q", "many.yaml"], in: folder.url)
        try #require(submitted.status == 0, "\(submitted.stdout)\(submitted.stderr)")
        let started = Date()
        let worker = try Batchrun.run(["worker", "q", "--once", "--quiet"], in: folder.url)
        let seconds = Date().timeIntervalSince(started)
        let fm = FileManager.default
        let failed = (try? fm.contentsOfDirectory(atPath: folder.path("q/failed")).filter { $0.hasSuffix(".log") }) ?? []
        let logs = failed.map { (try? String(contentsOfFile: folder.path("q/failed/\($0)"), encoding: .utf8).suffix(2_000)) ?? "" }
        #expect(worker.status == 0 && !worker.signalled, "exit \(worker.status): \(worker.stdout.suffix(2_000))\(worker.stderr.suffix(2_000)) \(logs)")
        let done = try fm.contentsOfDirectory(atPath: folder.path("q/done")).filter { $0.hasSuffix(".yaml") }
        try #require(done.count == 1, "done/: \(done); failed/: \(failed)")
        let report = try folder.json("q/done/\(done[0]).json")
        #expect(report["status"] as? String == "ok")
        let step = try #require(((report["jobs"] as? [[String: Any]])?.first?["steps"] as? [[String: Any]])?.first)
        #expect(step["kind"] as? String == "insert")
        #expect((step["batches"] as? [String: Int])?["committed"] == Self.rows, "\(step["batches"] ?? "")")
        #expect((step["rows"] as? [String: Int])?["inserted"] == Self.rows, "\(step["rows"] ?? "")")
        let (rows, idSum, vSum) = (String(Self.rows), Self.idSum(), Self.vSum())
        #expect(try Self.totals(folder, "q/after_insert.csv") == ["total_rows": rows, "distinct_ids": rows, "id_sum": idSum, "v_sum": vSum,
                                                                  "n_sum": "0", "n_min": "0", "n_max": "0"])
        print("ManyBatchesTests: a queue item of \(Self.rows) batches in \(String(format: "%.1f", seconds)) s")
    }
}
