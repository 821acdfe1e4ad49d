import CoreMetrics
import Foundation

/// The library's metrics (JOBFILE.md section 16), recorded through swift-metrics where the work
/// happens: a batch's commit, a job's end (its rows and conflicts per entity), an item's end, a
/// takeover, a reconnect, the worker's slots and the queue's counts. Until a process bootstraps
/// a metrics backend (`MetricsSystem.bootstrap`, as `batchrun run --metrics-file` and `worker
/// --metrics` do) every call goes to swift-metrics' no-op handlers. Nothing is recorded per
/// row: the dearest call is once per batch.
///
/// ```swift
/// BatchRunMetrics.batchCommitted(seconds: 0.012)
/// BatchRunMetrics.itemEnded(state: .done, seconds: 42)
/// ```
package enum BatchRunMetrics {
    package static let queueItems = "batchrun_queue_items"
    package static let items = "batchrun_items_total"
    package static let itemDuration = "batchrun_item_duration_seconds"
    package static let rows = "batchrun_rows_total"
    package static let conflicts = "batchrun_conflicts_total"
    package static let batchDuration = "batchrun_batch_duration_seconds"
    package static let takeovers = "batchrun_takeovers_total"
    package static let reconnects = "batchrun_reconnects_total"
    package static let workerSlots = "batchrun_worker_slots"

    /// A batch committed after `seconds` in its transaction.
    package static func batchCommitted(seconds: Double) {
        CoreMetrics.Timer(label: batchDuration).recordNanoseconds(Int64(max(0, seconds) * 1e9))
    }

    /// A job of a run ended: its steps' rows per entity and change (inserted, updated, deleted,
    /// rejected) and conflicts per entity and outcome.
    package static func jobEnded(_ report: JobReport) {
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

    /// A queue item ended in `state` (done, failed, retryable, cancelled) after `seconds` of its
    /// run; nil for one moved without running (a taken-over item whose run had ended).
    package static func itemEnded(state: QueueItemState, seconds: Double?) {
        Counter(label: items, dimensions: [("status", state.rawValue)]).increment()
        if let seconds {
            CoreMetrics.Timer(label: itemDuration).recordNanoseconds(Int64(max(0, seconds) * 1e9))
        }
    }

    /// A worker took over an item whose worker was gone.
    package static func takeover() {
        Counter(label: takeovers).increment()
    }

    /// Work rode out a lost connection to the server.
    package static func reconnect() {
        Counter(label: reconnects).increment()
    }

    /// A worker's slots: how many run an item, how many wait.
    package static func slots(busy: Int, idle: Int) {
        Gauge(label: workerSlots, dimensions: [("state", "busy")]).record(busy)
        Gauge(label: workerSlots, dimensions: [("state", "idle")]).record(idle)
    }

    /// The queue's items per state (every state, 0 for those with none).
    package static func queueCounts(_ entries: [QueueEntry]) {
        var counts: [QueueItemState: Int] = [:]
        for entry in entries { counts[entry.state, default: 0] += 1 }
        for state in QueueItemState.allCases {
            Gauge(label: queueItems, dimensions: [("state", state.rawValue)]).record(counts[state] ?? 0)
        }
    }
}
