import BatchRunStore

/// What one step did: `{ "kind": "insert", "entity": "Session", "run_s": 1.2, "rows": {...} }`.
package struct StepReport: Sendable, Hashable, Codable {
    package var kind: StepKind
    package var entity: String
    package var runSeconds: Double
    package var rows: RowCounts
    package var batches: BatchCounts
    /// Constraint or optimistic conflicts met (and resolved by the merge policy).
    package var conflicts: Int
    /// Batches tried again after a busy store or a conflict under `error`.
    package var retries = 0
    /// Batches carried on after the connection to the server was lost and made again (the
    /// job's report sums them as `reconnects`; not written per step).
    package var reconnects = 0
    /// Each conflict; the run report lists them all at its top level, not per step.
    package var conflictRecords: ConflictRecords = []

    package init(kind: StepKind, entity: String, runSeconds: Double = 0, rows: RowCounts = RowCounts(),
                batches: BatchCounts = BatchCounts(), conflicts: Int = 0) {
        self.conflicts = conflicts
        self.kind = kind
        self.entity = entity
        self.runSeconds = runSeconds
        self.rows = rows
        self.batches = batches
    }

    package enum CodingKeys: String, CodingKey {
        case kind, entity, rows, batches, conflicts, retries
        case runSeconds = "run_s"
    }

    /// The report of a step whose writes were all rolled back (an atomic job that failed):
    /// what it read stays, what it wrote is gone; only a conflict that failed the job remains.
    package var rolledBack: StepReport {
        var report = self
        report.rows = RowCounts(fetched: rows.fetched)
        report.batches = BatchCounts(committed: 0, rolledBack: batches.committed + batches.rolledBack)
        report.conflictRecords = ConflictRecords(conflictRecords.indices.lazy.filter { conflictRecords.outcome(at: $0) == .failed }
            .map { conflictRecords[$0] })
        report.conflicts = report.conflictRecords.count
        return report
    }
}
