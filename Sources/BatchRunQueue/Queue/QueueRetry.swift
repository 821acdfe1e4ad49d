/// What `batchrun retry` did to an item (JOBFILE.md 18).
///
/// ```swift
/// if case .retried = try queue.retry("12") { print("pending again, resumed from its checkpoints") }
/// ```
package enum QueueRetry: Sendable, Hashable {
    /// It had ended failed or cancelled and is pending again under its identity: its next run
    /// resumes from its checkpoints, its attempts counted afresh.
    case retried
    /// It is in this state (done, or not ended): nothing changed.
    case refused(QueueItemState)
    /// The queue has no item of that name.
    case notFound
}
