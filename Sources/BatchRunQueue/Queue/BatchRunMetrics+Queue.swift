import BatchRunStore
import CoreMetrics

/// The metrics a queue records: an item's end and the items per state (`BatchRunMetrics`, section 16).
extension BatchRunMetrics {
    /// A queue item ended in `state` (done, failed, retryable, cancelled) after `seconds` of its
    /// run; nil for one moved without running (a taken-over item whose run had ended).
    static func itemEnded(state: QueueItemState, seconds: Double?) {
        Counter(label: items, dimensions: [("status", state.rawValue)]).increment()
        if let seconds {
            CoreMetrics.Timer(label: itemDuration).recordNanoseconds(Int64(max(0, seconds) * 1e9))
        }
    }

    /// The queue's items per state (every state, 0 for those with none), as a snapshot counts them.
    static func queueCounts(_ snapshot: QueueSnapshot) {
        for state in QueueItemState.allCases {
            Gauge(label: queueItems, dimensions: [("state", state.rawValue)]).record(snapshot.counts[state.rawValue] ?? 0)
        }
    }
}
