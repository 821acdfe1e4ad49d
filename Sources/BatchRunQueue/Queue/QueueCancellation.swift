/// What `batchrun cancel` did to an item.
///
/// ```swift
/// if case .requested = try queue.cancel("20261126T100000000-0001-nightly.yaml") { print("its worker cancels it") }
/// ```
package enum QueueCancellation: Sendable, Hashable {
    /// It was waiting (pending, scheduled or retryable) and is now `cancelled`.
    case cancelled
    /// It is running: its worker cancels its run (as Ctrl-C cancels a run) and it ends `cancelled`.
    case requested
    /// It had already ended in this state; nothing changed.
    case ended(QueueItemState)
    /// The queue has no item of that name.
    case notFound
}
