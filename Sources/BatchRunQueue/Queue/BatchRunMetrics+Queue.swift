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

    /// The parts of the batches not finished yet, per state (`waiting` for those not queued),
    /// summed over the batches: one series per state, however many batches come and go.
    static func batchParts(_ batches: [QueueBatch]) {
        var counts: [String: Int] = [:]
        for batch in batches where !batch.isFinished {
            for (state, count) in batch.parts { counts[state, default: 0] += count }
        }
        for state in [QueueBatch.waiting] + QueueItemState.allCases.map(\.rawValue) {
            Gauge(label: batchPartsLabel, dimensions: [("state", state)]).record(counts[state] ?? 0)
        }
    }

    static let batchPartsLabel = "batchrun_batch_parts"

    /// 1 while the queue is paused, else 0; and per group, 1 while it is paused, 0 once resumed
    /// (`reported`: the groups given a series so far, kept by the caller).
    static func paused(_ pause: QueuePause, reported: inout Set<String>) {
        Gauge(label: pausedLabel).record(pause.queue ? 1 : 0)
        reported.formUnion(pause.groups)
        for group in reported { Gauge(label: pausedLabel, dimensions: [("group", group)]).record(pause.groups.contains(group) ? 1 : 0) }
    }

    static let pausedLabel = "batchrun_queue_paused"
}
