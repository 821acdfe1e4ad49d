import BatchRunStore
import CoreMetrics

/// The metrics a job's end records (`BatchRunMetrics`, section 16).
extension BatchRunMetrics {
    /// A job of a run ended: its steps' rows per entity and change (inserted, updated, deleted,
    /// rejected) and conflicts per entity and outcome.
    static func jobEnded(_ report: JobReport) {
        for step in report.steps {
            let counts = [("inserted", step.rows.inserted), ("updated", step.rows.updated),
                          ("deleted", step.rows.deleted), ("rejected", step.rows.rejected)]
            for (change, count) in counts where count > 0 {
                Counter(label: rows, dimensions: [("entity", step.entity), ("change", change)]).increment(by: count)
            }
            guard step.conflicts > 0 else { continue }
            var byOutcome: [String: Int] = [:]
            let records = step.conflictRecords
            for position in records.indices { byOutcome[records.outcome(at: position).rawValue, default: 0] += 1 }
            // Conflicts counted without a record (none is kept past the report's limit).
            if step.conflicts > records.count { byOutcome["unrecorded", default: 0] += step.conflicts - records.count }
            for (outcome, count) in byOutcome.sorted(by: { $0.key < $1.key }) {
                Counter(label: conflicts, dimensions: [("entity", step.entity), ("outcome", outcome)]).increment(by: count)
            }
        }
    }
}
