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
    static let batchDuration = "batchrun_batch_duration_seconds"
    static let takeovers = "batchrun_takeovers_total"
    package static let reconnects = "batchrun_reconnects_total"
    static let workerSlots = "batchrun_worker_slots"

    /// A batch committed after `seconds` in its transaction.
    package static func batchCommitted(seconds: Double) {
        CoreMetrics.Timer(label: batchDuration).recordNanoseconds(Int64(max(0, seconds) * 1e9))
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
}
