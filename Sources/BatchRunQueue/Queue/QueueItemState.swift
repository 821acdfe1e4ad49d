/// Where a queue item is: waiting (`pending`: due now; `scheduled`: not before its time;
/// `retryable`: failed, tried again at its next try), being run, or ended (`done`: its run ended
/// ok; `failed`: it failed on its last attempt, timed out or is not a valid job file;
/// `cancelled`: `batchrun cancel` ended it). A queue folder's folders; the `state` column of a
/// queue in PostgreSQL.
///
/// ```swift
/// let done = try queue.list().filter { $0.state == .done }.count
/// ```
public enum QueueItemState: String, Sendable, CaseIterable, Codable {
    case pending, scheduled, retryable, running, done, failed, cancelled

    /// Waiting to be claimed (now or at its time).
    package var isWaiting: Bool { self == .pending || self == .scheduled || self == .retryable }
}
