import BatchRunStore
import BatchRunContext
import BatchRunFeeds
import Foundation

/// The run state a job-file run keeps in its store, in tables batchrun owns:
///
/// - `_batchrun_runs`: one row per run (attempt): the job file's path and content hash, the
///   `--param` values, start, end, status (`running` until it ends), process id, host and
///   process start (to tell a live run from a dead one), and the run it continued;
/// - `_batchrun_jobs`: per run and job, the job's definition hash, status, run time, rows of
///   this attempt and of all attempts, published `as:` outputs and error;
/// - `_batchrun_progress`: per run, job and step, the step's checkpoint (where it continues),
///   whether it is done, and the rows counted over all attempts, written in the transaction
///   of every batch;
/// - `_batchrun_parts`: per run, job and step, the parts of a feed given as a glob, as listed
///   when the step first committed.
package final class RunLedger: Sendable {
    package let store: Store

    package init(store: Store) {
        self.store = store
    }

    /// True once a run was recorded in this store.
    private static func hasTables(_ db: any StoreConnection) throws -> Bool {
        try db.tableExists("_batchrun_runs")
    }

    /// Creates the tables when missing, inside the transaction of a run's first write. A store
    /// whose ledger an earlier batchrun made (on SQLite) gains the `seq` column, numbered by
    /// rowid, which was the order before.
    private static func createTables(in db: any StoreConnection) throws {
        // One catalog query: no columns means no tables (they are made together).
        let columns = try db.columnNames(ofTables: ["_batchrun_jobs", RunLedgerTables.parts.tableName])
        let jobColumns = columns["_batchrun_jobs"] ?? []
        guard !jobColumns.isEmpty else {
            for table in RunLedgerTables.all { try db.createTable(table) }
            return
        }
        if !jobColumns.contains("seq") {
            try db.execute("ALTER TABLE _batchrun_jobs ADD COLUMN seq INTEGER")
            try db.execute("UPDATE _batchrun_jobs SET seq = rowid")
        }
        // Added with feeds in parts (section 17); a ledger made before has none.
        if columns[RunLedgerTables.parts.tableName] == nil { try db.createTable(RunLedgerTables.parts) }
    }

    /// How a run's jobs are ordered: by `seq`, or by rowid in a ledger no run of this version
    /// wrote to yet (read before its first write added `seq`).
    private static func jobOrder(_ db: any StoreConnection) throws -> String {
        try db.columnNames(of: "_batchrun_jobs").contains("seq") ? "seq" : "rowid"
    }

    // MARK: Runs

    /// One run as recorded.
    package struct Run: Sendable {
        package var id: Int64
        package var file: String
        package var fileHash: String
        package var params: [String: String]
        package var startedAt: Date
        package var endedAt: Date?
        package var status: LedgerStatus
        package var elapsedSeconds: Double?
        package var pid: Int32
        package var host: String
        var processStart: String
        package var resumedFrom: Int64?

        /// True when the process that runs it is alive (on this host, and the same process:
        /// its start time matches, so a reused process id is not mistaken for it).
        var isAlive: Bool {
            status == .running && host == ProcessIdentity.host && ProcessIdentity.start(of: pid) == processStart
        }
    }

    /// The latest run of the job file at `path`.
    package func latestRun(file path: String) throws -> Run? {
        try store.readRecords { db in
            guard try Self.hasTables(db) else { return nil }
            return try db.namedRows("SELECT * FROM _batchrun_runs WHERE file = ? ORDER BY id DESC LIMIT 1", [.text(path)])
                .first.map(Self.run)
        }
    }

    /// The runs of the job file at `path`, newest first.
    package func runs(file path: String, limit: Int) throws -> [Run] {
        try store.readRecords { db in
            guard try Self.hasTables(db) else { return [] }
            return try db.namedRows("SELECT * FROM _batchrun_runs WHERE file = ? ORDER BY id DESC LIMIT ?",
                                    [.text(path), StoreValue(limit)]).map(Self.run)
        }
    }

    private static func run(_ row: NamedRow) -> Run {
        let params = row["params"].string.flatMap { try? JSONDecoder().decode([String: String].self, from: Data($0.utf8)) } ?? [:]
        return Run(id: row["id"].int64 ?? 0, file: row["file"].string ?? "", fileHash: row["file_hash"].string ?? "", params: params,
                   startedAt: row["started_at"].string.flatMap(DateText.date) ?? Date(timeIntervalSince1970: 0),
                   endedAt: row["ended_at"].string.flatMap(DateText.date), status: LedgerStatus(recorded: row["status"].string),
                   elapsedSeconds: row["elapsed_s"].double, pid: Int32(truncatingIfNeeded: row["pid"].int64 ?? 0),
                   host: row["host"].string ?? "", processStart: row["process_start"].string ?? "", resumedFrom: row["resumed_from"].int64)
    }

    /// Records a new run (`running`, by this process) inside `db`'s transaction; when it
    /// continues `previous`, the jobs' records and the steps' checkpoints and counts are carried
    /// over to it.
    package func begin(file path: String, fileHash: String, params: [String: String], startedAt: Date, continuing previous: Int64?,
               in db: any StoreConnection) throws -> Int64 {
        try Self.createTables(in: db)
        let encoded = String(decoding: try JSONEncoder.sorted.encode(params), as: UTF8.self)
        let inserted = try db.value("""
            INSERT INTO _batchrun_runs (file, file_hash, params, started_at, status, pid, host, process_start, resumed_from)
            VALUES (?, ?, ?, ?, 'running', ?, ?, ?, ?) RETURNING id
            """, [.text(path), .text(fileHash), .text(encoded), .text(Self.timestamp(startedAt)),
                  .integer(Int64(ProcessInfo.processInfo.processIdentifier)), .text(ProcessIdentity.host),
                  .text(ProcessIdentity.start(of: ProcessInfo.processInfo.processIdentifier) ?? ""), StoreValue(previous)])
        guard case .integer(let id)? = inserted else { throw StoreError.cannotOpen(path: store.path, reason: "the run was not recorded") }
        if let previous {
            try db.execute("""
                INSERT INTO _batchrun_jobs (run_id, job, definition, status, done_earlier, rows_total, outputs, seq)
                SELECT ?, job, definition, status, CASE WHEN status = 'ok' THEN 1 ELSE 0 END, rows_total, outputs, seq
                FROM _batchrun_jobs WHERE run_id = ?
                """, [.integer(id), .integer(previous)])
            try db.execute("""
                INSERT INTO _batchrun_progress (run_id, job, step, checkpoint, done, fetched, inserted, updated, deleted, rejected)
                SELECT ?, job, step, checkpoint, done, fetched, inserted, updated, deleted, rejected
                FROM _batchrun_progress WHERE run_id = ?
                """, [.integer(id), .integer(previous)])
            try db.execute("""
                INSERT INTO _batchrun_parts (run_id, job, step, part, name, size, modified, etag)
                SELECT ?, job, step, part, name, size, modified, etag FROM _batchrun_parts WHERE run_id = ?
                """, [.integer(id), .integer(previous)])
        }
        return id
    }

    /// Records how the run ended.
    package func finish(run id: Int64, status: RunReport.Status, elapsedSeconds: Double, in db: any StoreConnection) throws {
        try db.execute("UPDATE _batchrun_runs SET status = ?, ended_at = ?, elapsed_s = ? WHERE id = ?",
                       [.text(status.rawValue), .text(Self.timestamp(Date())), .real(elapsedSeconds), .integer(id)])
    }

    // MARK: Jobs and steps

    /// A job as an earlier attempt of this run left it.
    package struct JobRecord: Sendable {
        package var definition: String
        package var status: LedgerStatus
        package var outputs: [String: [String: StoreValue]]
        package var rowsTotal: RowCounts
    }

    /// What the earlier attempts of run `id` left of each job.
    package func jobs(of id: Int64) throws -> [String: JobRecord] {
        try store.readRecords { db in
            var jobs: [String: JobRecord] = [:]
            guard try Self.hasTables(db) else { return jobs }
            for row in try db.namedRows("SELECT * FROM _batchrun_jobs WHERE run_id = ?", [.integer(id)]) {
                let outputs = row["outputs"].string.flatMap {
                    try? JSONDecoder().decode([String: [String: StoreValue]].self, from: Data($0.utf8))
                } ?? [:]
                let rows = row["rows_total"].string.flatMap { try? JSONDecoder().decode(RowCounts.self, from: Data($0.utf8)) }
                jobs[row["job"].string ?? ""] = JobRecord(definition: row["definition"].string ?? "", status: LedgerStatus(recorded: row["status"].string),
                                                          outputs: outputs, rowsTotal: rows ?? RowCounts())
            }
            return jobs
        }
    }

    /// The jobs of run `id` as its attempts recorded them, in the order they first started.
    func jobReports(of id: Int64) throws -> [JobReport] {
        try store.readRecords { db in
            guard try Self.hasTables(db) else { return [] }
            let decoder = JSONDecoder()
            return try db.namedRows("SELECT * FROM _batchrun_jobs WHERE run_id = ? ORDER BY \(try Self.jobOrder(db))",
                                    [.integer(id)]).map { row in
                let rows = row["rows"].string.flatMap { try? decoder.decode(RowCounts.self, from: Data($0.utf8)) }
                let total = row["rows_total"].string.flatMap { try? decoder.decode(RowCounts.self, from: Data($0.utf8)) }
                var job = JobReport(name: row["job"].string ?? "", status: JobStatus(rawValue: row["status"].string ?? "") ?? .failed,
                                    runSeconds: row["run_s"].double ?? 0, error: row["error"].string, rows: rows ?? RowCounts(),
                                    resumed: row["done_earlier"].bool == true ? "done earlier" : nil)
                job.rowsTotal = total ?? job.rows
                return job
            }
        }
    }

    /// A step as an earlier attempt left it: where it continues, whether it is done, and its
    /// rows over all attempts.
    package struct StepRecord: Sendable {
        package var position: StepPosition?
        package var done: Bool
        package var rows: RowCounts
        /// A feed in parts: the parts as the run recorded them; nil for any other step.
        package var parts: [FeedPart]?
    }

    package func steps(of id: Int64, job: String) throws -> [Int: StepRecord] {
        try store.readRecords { db in
            var steps: [Int: StepRecord] = [:]
            guard try Self.hasTables(db) else { return steps }
            for row in try db.namedRows("SELECT * FROM _batchrun_progress WHERE run_id = ? AND job = ?", [.integer(id), .text(job)]) {
                let position = row["checkpoint"].string.flatMap { try? JSONDecoder().decode(StepPosition.self, from: Data($0.utf8)) }
                steps[row["step"].int ?? 0] = StepRecord(position: position, done: row["done"].bool == true, rows: RowCounts(
                    fetched: row["fetched"].int ?? 0, inserted: row["inserted"].int ?? 0, updated: row["updated"].int ?? 0,
                    deleted: row["deleted"].int ?? 0, rejected: row["rejected"].int ?? 0))
            }
            guard try db.tableExists(RunLedgerTables.parts.tableName) else { return steps }
            var parts: [Int: [FeedPart]] = [:]
            for row in try db.namedRows("SELECT * FROM _batchrun_parts WHERE run_id = ? AND job = ? ORDER BY step, part",
                                        [.integer(id), .text(job)]) {
                parts[row["step"].int ?? 0, default: []].append(FeedPart(
                    name: row["name"].string ?? "", size: Int64(row["size"].int ?? 0), modified: row["modified"].double ?? 0,
                    etag: row["etag"].string))
            }
            for (step, list) in parts { steps[step, default: StepRecord(position: nil, done: false, rows: RowCounts())].parts = list }
            return steps
        }
    }

    /// A job's record says `running` with its definition; when it starts over, its steps'
    /// earlier checkpoints and counts are dropped in the same transaction.
    func startJob(run id: Int64, job: String, definition: String, over: Bool, in db: any StoreConnection) throws {
        if over {
            try db.execute("DELETE FROM _batchrun_progress WHERE run_id = ? AND job = ?", [.integer(id), .text(job)])
            try db.execute("DELETE FROM _batchrun_parts WHERE run_id = ? AND job = ?", [.integer(id), .text(job)])
        }
        try db.execute("""
            INSERT INTO _batchrun_jobs (run_id, job, definition, status, seq)
            VALUES (?, ?, ?, 'running', (SELECT coalesce(max(seq), 0) + 1 FROM _batchrun_jobs WHERE run_id = ?))
            ON CONFLICT (run_id, job) DO UPDATE SET definition = excluded.definition, status = 'running',
                done_earlier = 0, rows_total = CASE WHEN ? THEN NULL ELSE _batchrun_jobs.rows_total END, outputs = NULL
            """, [.integer(id), .text(job), .text(definition), .integer(id), StoreValue(over)])
    }

    /// A step's checkpoint, inside its batch's transaction: its new position, and the rows the
    /// batch adds to its totals.
    func saveCheckpoint(run id: Int64, job: String, step: Int, position: StepPosition, rows: RowCounts, in db: any StoreConnection) throws {
        let encoded = String(decoding: try JSONEncoder.sorted.encode(position), as: UTF8.self)
        try db.execute("""
            INSERT INTO _batchrun_progress (run_id, job, step, checkpoint, done, fetched, inserted, updated, deleted, rejected)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (run_id, job, step) DO UPDATE SET checkpoint = excluded.checkpoint, done = excluded.done,
                fetched = _batchrun_progress.fetched + excluded.fetched, inserted = _batchrun_progress.inserted + excluded.inserted,
                updated = _batchrun_progress.updated + excluded.updated, deleted = _batchrun_progress.deleted + excluded.deleted, rejected = _batchrun_progress.rejected + excluded.rejected
            """, [.integer(id), .text(job), StoreValue(step), .text(encoded), StoreValue(position == .done), StoreValue(rows.fetched),
                  StoreValue(rows.inserted), StoreValue(rows.updated), StoreValue(rows.deleted), StoreValue(rows.rejected)])
    }

    /// A step's parts (a feed in parts), in the transaction of its first batch: the list a
    /// resumed run goes on with.
    func recordParts(run id: Int64, job: String, step: Int, parts: [FeedPart], in db: any StoreConnection) throws {
        try db.execute("DELETE FROM _batchrun_parts WHERE run_id = ? AND job = ? AND step = ?", [.integer(id), .text(job), StoreValue(step)])
        for (index, part) in parts.enumerated() {
            try db.execute("INSERT INTO _batchrun_parts (run_id, job, step, part, name, size, modified, etag) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                           [.integer(id), .text(job), StoreValue(step), StoreValue(index), .text(part.name), .integer(part.size),
                            .real(part.modified), part.etag.map(StoreValue.text) ?? .null])
        }
    }

    /// Marks a step done (its last batch already carries its checkpoint; a fetch's rows are
    /// those of its last attempt, since it reads again when it runs again).
    func finishStep(run id: Int64, job: String, step: Int, rows: RowCounts, in db: any StoreConnection) throws {
        try db.execute("""
            INSERT INTO _batchrun_progress (run_id, job, step, done, fetched) VALUES (?, ?, ?, 1, ?)
            ON CONFLICT (run_id, job, step) DO UPDATE SET done = 1, fetched = excluded.fetched
            """, [.integer(id), .text(job), StoreValue(step), StoreValue(rows.fetched)])
    }

    /// Records how a job ended in this attempt; `db` is the job's own transaction for an atomic job.
    func finishJob(run id: Int64, job: String, status: JobStatus, runSeconds: Double, rows: RowCounts, rowsTotal: RowCounts,
                   outputs: [String: [String: StoreValue]], error: String?, in db: any StoreConnection) throws {
        try db.execute("""
            UPDATE _batchrun_jobs SET status = ?, run_s = ?, rows = ?, rows_total = ?, outputs = ?, error = ?
            WHERE run_id = ? AND job = ?
            """, [.text(status.rawValue), .real(runSeconds), .text(String(decoding: try JSONEncoder.sorted.encode(rows), as: UTF8.self)),
                  .text(String(decoding: try JSONEncoder.sorted.encode(rowsTotal), as: UTF8.self)),
                  .text(String(decoding: try JSONEncoder.sorted.encode(outputs), as: UTF8.self)), StoreValue(error), .integer(id), .text(job)])
    }

    /// The runs of the job file at `path`, newest first, with each job's run time and rows.
    package func history(file path: String, limit: Int) throws -> [RunSummary] {
        let runs = try self.runs(file: path, limit: limit)
        guard !runs.isEmpty else { return [] }
        return try store.readRecords { db in
            var jobs: [Int64: [RunSummary.JobTime]] = [:], rows: [Int64: RowCounts] = [:]
            let sql = "SELECT run_id, job, status, run_s, done_earlier, rows FROM _batchrun_jobs WHERE run_id IN ("
                + runs.map { _ in "?" }.joined(separator: ", ") + ") ORDER BY run_id, \(try Self.jobOrder(db))"
            for row in try db.namedRows(sql, SQLArguments(runs.map { .integer($0.id) })) {
                let id = row["run_id"].int64 ?? 0
                jobs[id, default: []].append(RunSummary.JobTime(name: row["job"].string ?? "", status: LedgerStatus(recorded: row["status"].string),
                                                                runSeconds: row["run_s"].double ?? 0, doneEarlier: row["done_earlier"].bool == true))
                if let text = row["rows"].string, let counts = try? JSONDecoder().decode(RowCounts.self, from: Data(text.utf8)) {
                    rows[id, default: RowCounts()] += counts
                }
            }
            return runs.map { run in
                RunSummary(id: run.id, startedAt: run.startedAt, endedAt: run.endedAt, status: run.status,
                           elapsedSeconds: run.elapsedSeconds, resumedFrom: run.resumedFrom, rows: rows[run.id] ?? RowCounts(),
                           jobs: jobs[run.id] ?? [])
            }
        }
    }

    package static func timestamp(_ date: Date) -> String { DateText.text(date) }
}

extension JSONEncoder {
    /// Keys in a stable order, so equal values encode alike.
    package static var sorted: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }
}
