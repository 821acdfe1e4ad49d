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
public final class Scheduler: Sendable {
    public enum Event: Sendable {
        /// `index` numbers operations from 1 in the order they start (or end without starting);
        /// an operation's start and finish carry the same index. `total` is how many there are.
        case started(name: String, index: Int, total: Int)
        case finished(OperationOutcome, index: Int, total: Int)
    }

    public let operations: [BatchOperation]
    public let maxConcurrent: Int
    public let failFast: Bool
    /// Seconds each operation may run, by name; past it the operation is cancelled and `timed_out`.
    public let timeouts: [String: Double]
    /// When set, completion blocks run only after this context merged the operation's saves.
    public let mainContext: MainContext?
    private let cancelled = Mutex(false)

    public init(operations: [BatchOperation], maxConcurrent: Int = ProcessInfo.processInfo.activeProcessorCount,
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
        for operation in operations { operation.cancel() }
    }

    public var isCancelled: Bool { cancelled.withLock { $0 } }

    /// Runs everything and returns each operation's outcome, in the operations' order.
    public func run(onEvent: @escaping @Sendable (Event) -> Void = { _ in }) async -> [OperationOutcome] {
        var run = SchedulerRun(scheduler: self, onEvent: onEvent)
        await run.execute()
        return operations.compactMap { run.outcomes[$0.name] }
    }

    /// Runs blocking work (a hook) on a thread of its own, off the cooperative pool.
    static func onThread<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: work()) }.start()
        }
    }
}

/// The state of one `Scheduler.run`.
private struct SchedulerRun {
    let scheduler: Scheduler
    let onEvent: @Sendable (Scheduler.Event) -> Void
    let byName: [String: BatchOperation]
    var outcomes: [String: OperationOutcome] = [:]
    var readySince: [String: Date] = [:]
    var running: Set<String> = []
    var indexes: [String: Int] = [:]
    var numbered = 0
    let started = Date()
    var workers: WorkerThreads?

    init(scheduler: Scheduler, onEvent: @escaping @Sendable (Scheduler.Event) -> Void) {
        self.scheduler = scheduler
        self.onEvent = onEvent
        self.byName = Dictionary(uniqueKeysWithValues: scheduler.operations.map { ($0.name, $0) })
    }

    var total: Int { scheduler.operations.count }

    mutating func number(_ name: String) -> Int {
        if let index = indexes[name] { return index }
        numbered += 1
        indexes[name] = numbered
        return numbered
    }

    mutating func execute() async {
        let workers = WorkerThreads(count: min(scheduler.maxConcurrent, max(1, scheduler.operations.count)))
        defer { workers.shutDown() }
        self.workers = workers
        await withTaskGroup(of: OperationOutcome.self) { group in
            while true {
                for operation in await settle() where running.count < scheduler.maxConcurrent {
                    start(operation, in: &group)
                }
                guard let outcome = await group.next() else { break }
                running.remove(outcome.name)
                await finish(outcome)
                if scheduler.failFast && outcome.status != .ok { scheduler.cancelAll() }
            }
        }
        _ = await settle()
    }

    private mutating func start(_ operation: BatchOperation, in group: inout TaskGroup<OperationOutcome>) {
        running.insert(operation.name)
        let queued = Date().timeIntervalSince(readySince[operation.name] ?? started)
        onEvent(.started(name: operation.name, index: number(operation.name), total: total))
        let timeout = scheduler.timeouts[operation.name]
        let workers = self.workers!
        group.addTask {
            let begun = Date()
            let timer = timeout.map { seconds in
                Task.detached {
                    try? await Task.sleep(for: .seconds(seconds))
                    if !Task.isCancelled { operation.timeOut() }
                }
            }
            let result = await workers.run { operation.body(operation) }
            timer?.cancel()
            let seconds = Date().timeIntervalSince(begun)
            var outcome = OperationOutcome(name: operation.name, status: .ok, error: nil, skippedBecause: nil,
                                           queuedSeconds: queued, runSeconds: seconds)
            switch result {
            case .ok where operation.isTimedOut, .cancelled where operation.isTimedOut, .failed where operation.isTimedOut:
                outcome.status = .timedOut
                outcome.error = "timed out after \(String(format: "%g", timeout ?? 0))s"
            case .ok:
                outcome.status = .ok
            case .failed(let message):
                outcome.status = .failed
                outcome.error = message
            case .cancelled:
                outcome.status = .cancelled
            }
            return outcome
        }
    }

    /// Records a final outcome, then runs the operation's hooks and completion block.
    private mutating func finish(_ outcome: OperationOutcome) async {
        outcomes[outcome.name] = outcome
        onEvent(.finished(outcome, index: number(outcome.name), total: total))
        guard let operation = byName[outcome.name] else { return }
        if let finish = operation.finishBlock {
            await Scheduler.onThread { finish(outcome) }
        }
        if let completion = operation.completionBlock {
            if let main = scheduler.mainContext { await main.catchUp() }
            await MainActor.run { completion(outcome) }
        }
    }

    /// Settles operations that can no longer run (cancelled, or a needed one did not succeed);
    /// returns those ready to start, in the operations' order.
    private mutating func settle() async -> [BatchOperation] {
        var ready: [BatchOperation] = []
        var changed = true
        while changed {
            changed = false
            ready = []
            for operation in scheduler.operations where outcomes[operation.name] == nil && !running.contains(operation.name) {
                if scheduler.isCancelled || operation.isCancelled {
                    await finish(OperationOutcome(name: operation.name, status: .cancelled, error: nil, skippedBecause: nil,
                                                  queuedSeconds: 0, runSeconds: 0))
                    changed = true
                    continue
                }
                let needed = operation.needs.filter { byName[$0] != nil }
                if let blocker = needed.first(where: { outcomes[$0].map { !$0.status.letsDependentsRun } ?? false }) {
                    await finish(OperationOutcome(name: operation.name, status: .skipped, error: nil,
                                                  skippedBecause: "\(blocker) \(outcomes[blocker]!.status.rawValue)",
                                                  queuedSeconds: 0, runSeconds: 0))
                    changed = true
                    continue
                }
                if needed.allSatisfy({ outcomes[$0]?.status == .ok }) {
                    if readySince[operation.name] == nil { readySince[operation.name] = Date() }
                    ready.append(operation)
                }
            }
        }
        return ready
    }
}
