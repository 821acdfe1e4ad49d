import BatchRunStore

/// Why a fan-out batch could not be queued.
///
/// ```swift
/// throw QueueBatchError.notQueued
/// ```
package enum QueueBatchError: BatchRunError, Equatable {
    /// The queue gave the batch no number (its insert returned nothing).
    case notQueued

    package var code: String { "queue.batch" }
    package var message: String { description }

    package var description: String {
        switch self {
        case .notQueued: "the queue did not take the batch"
        }
    }
}
