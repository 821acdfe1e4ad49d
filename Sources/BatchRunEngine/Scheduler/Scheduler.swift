import BatchRunContext
import Foundation
import Synchronization

/// Runs operations in dependency order with at most `maxConcurrent` at once, like an
/// `OperationQueue`, but a failed, timed-out or cancelled operation skips everything that
/// needs it (Foundation's does not propagate), and every operation's completion block runs,
/// on the main actor, however it ended.
///
/// ```swift
/// let scheduler = Scheduler(operations: [load, report], maxConcurrent: 2)
/// let outcomes = await scheduler.run()
/// ```
///
/// The operations run on `maxConcurrent` threads of the scheduler's own, which also do the
/// bookkeeping: a worker that finishes an operation starts the next ready one itself.
public final class Scheduler: Sendable {
    public enum Event: Sendable {
        /// `index` numbers operations from 1 in the order they start (or end without starting);
        /// an operation's start and finish carry the same index. `total` is how many there are.
        case started(name: String, index: Int, total: Int)
        case finished(OperationOutcome, index: Int, total: Int)
    }

    package let operations: [any ScheduledOperation]
    package let maxConcurrent: Int
    package let failFast: Bool
    /// Seconds each operation may run, by name; past it the operation is cancelled and `timed_out`.
    package let timeouts: [String: Double]
    /// When set, completion blocks run only after this context merged the operation's saves.
    package let mainContext: MainContext?
    private let cancelled = Mutex(false)

    public init(operations: [any ScheduledOperation], maxConcurrent: Int = ProcessInfo.processInfo.activeProcessorCount,
                failFast: Bool = false, timeouts: [String: Double] = [:], mainContext: MainContext? = nil) {
        self.operations = operations
        self.maxConcurrent = max(1, maxConcurrent)
        self.failFast = failFast
        self.timeouts = timeouts
        self.mainContext = mainContext
    }

    /// Cancels every operation: running ones stop at their next batch boundary (or their
    /// statement in flight is interrupted), the rest never start and end `cancelled`.
    public func cancelAll() {
        cancelled.withLock { $0 = true }
        for operation in operations { operation.unit.cancel() }
    }

    package var isCancelled: Bool { cancelled.withLock { $0 } }

    /// Runs everything and returns each operation's outcome, in the operations' order, once
    /// every operation has ended, every completion block has run, and the main context (when
    /// given) has merged every save.
    public func run(onEvent: @escaping @Sendable (Event) -> Void = { _ in }) async -> [OperationOutcome] {
        guard !operations.isEmpty else { return [] }
        let engine = SchedulerEngine(scheduler: self, onEvent: onEvent)
        let outcomes = await engine.run()
        await engine.completionsDone()
        if let mainContext { await mainContext.catchUp() }
        return outcomes
    }
}
