import BatchRunStore

/// The tables of the run ledger (`RunLedger`), declared as entities so each database creates
/// them with its own types (SQLite's affinities, PostgreSQL's bigint, double precision and an
/// identity run id) from the one definition user tables have.
///
/// ```swift
/// for table in RunLedgerTables.all { try connection.createTable(table) }
/// ```
enum RunLedgerTables {
    package static let runs = Entity(name: "_batchrun_runs", columns: [
        Column(name: "id", type: .integer, isPrimaryKey: true),
        text("file"), text("file_hash"), text("params"), text("started_at"),
        Column(name: "ended_at", type: .text),
        text("status"),
        Column(name: "elapsed_s", type: .real),
        Column(name: "pid", type: .integer, notNull: true),
        text("host"), text("process_start"),
        Column(name: "resumed_from", type: .integer),
    ], primaryKey: ["id"], indexes: [["file", "id"]])

    /// `seq` numbers a run's jobs in the order they first started.
    package static let jobs = Entity(name: "_batchrun_jobs", columns: [
        Column(name: "run_id", type: .integer, notNull: true),
        text("job"), text("definition"), text("status"),
        counter("done_earlier"),
        Column(name: "run_s", type: .real, notNull: true, defaultLiteral: "0"),
        Column(name: "rows", type: .text), Column(name: "rows_total", type: .text),
        Column(name: "outputs", type: .text), Column(name: "error", type: .text),
        Column(name: "seq", type: .integer),
    ], primaryKey: ["run_id", "job"])

    package static let progress = Entity(name: "_batchrun_progress", columns: [
        Column(name: "run_id", type: .integer, notNull: true),
        text("job"),
        Column(name: "step", type: .integer, notNull: true),
        Column(name: "checkpoint", type: .text),
        counter("done"), counter("fetched"), counter("inserted"), counter("updated"), counter("deleted"), counter("rejected"),
    ], primaryKey: ["run_id", "job", "step"])

    /// The parts of a feed given as a glob (section 17), as the run listed them when the step
    /// first committed: `part` numbers them from 0 in name order; a resumed run reads this list,
    /// not a new listing.
    package static let parts = Entity(name: "_batchrun_parts", columns: [
        Column(name: "run_id", type: .integer, notNull: true),
        text("job"),
        Column(name: "step", type: .integer, notNull: true),
        Column(name: "part", type: .integer, notNull: true),
        text("name"),
        Column(name: "size", type: .integer, notNull: true),
        Column(name: "modified", type: .real, notNull: true),
        Column(name: "etag", type: .text),
    ], primaryKey: ["run_id", "job", "step", "part"])

    package static let all = [runs, jobs, progress, parts]

    private static func text(_ name: String) -> Column {
        Column(name: name, type: .text, notNull: true)
    }

    private static func counter(_ name: String) -> Column {
        Column(name: name, type: .integer, notNull: true, defaultLiteral: "0")
    }
}
