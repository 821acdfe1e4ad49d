import Dispatch

/// Runs blocking work (a queue's snapshot, an action on a PostgreSQL queue) on a thread of
/// Dispatch's, never on the threads of Swift's concurrency that serve requests.
///
/// ```swift
/// let snapshot = await offTheLoop { try? queue.snapshot(.live(finishedShown: 50)) }
/// ```
func offTheLoop<Value: Sendable>(_ work: @escaping @Sendable () -> Value) async -> Value {
    await withCheckedContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(returning: work()) }
    }
}
