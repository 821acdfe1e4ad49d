/// One item of a queue in PostgreSQL as `batchrun queue` lists it (`PostgresQueue.items()`).
///
/// ```swift
/// for item in try queue.items() where item.state == .retryable { print(item.id, item.runAt ?? "") }
/// ```
package struct PostgresQueueItemRow: Sendable, Codable {
    package var id: Int64
    package var name: String
    package var state: QueueItemState
    package var priority: Int
    package var worker: String?
    /// Seconds until the lease runs out (negative: it ran out; the next claim takes it over).
    package var leaseLeft: Double?
    /// Claims of the item so far (each attempt, each takeover, each resumption).
    package var claims: Int
    /// Attempts that ended failed, and how many it may have.
    package var attempts: Int
    package var maxAttempts: Int
    /// When a scheduled item is due, or a retryable one's next try (ISO 8601, UTC).
    package var runAt: String?
    package var submittedAt: String
    package var endedAt: String?
    package var status: Int?
    package var error: String?
    /// A running item that `cancel` marked.
    package var cancelling: Bool?
    /// The schedule that queued it.
    package var schedule: String?
    /// A running item's progress as its run last published it (`ItemProgress` JSON); not listed.
    package var progress: String? = nil

    package enum CodingKeys: String, CodingKey {
        case id, name, state, priority, worker, claims, attempts, status, error, cancelling, schedule
        case leaseLeft = "lease_left_s", submittedAt = "submitted_at", endedAt = "ended_at", maxAttempts = "max_attempts", runAt = "run_at"
    }
}
