/// Where a queue item is: waiting, being run, or ended (`done`: its run ended ok; `failed`:
/// it failed, timed out or is not a valid job file). A queue folder's four folders; the
/// `state` column of a queue in PostgreSQL.
///
/// ```swift
/// let done = try queue.list().filter { $0.state == .done }.count
/// ```
public enum QueueItemState: String, Sendable, CaseIterable, Codable {
    case pending, running, done, failed
}
