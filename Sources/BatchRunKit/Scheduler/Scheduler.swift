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

/// The state of one `Scheduler.run`: for each operation, how many of its needs are still
/// unfinished, and who needs it; an operation is ready when that count reaches zero.
private struct SchedulerRun {
    let scheduler: Scheduler
    let onEvent: @Sendable (Scheduler.Event) -> Void
    let operations: [BatchOperation]
    /// Position of each operation by name.
    let position: [String: Int]
    /// Per operation: the positions of the operations that need it.
    var dependents: [[Int]]
    /// Per operation: needs not yet finished.
    var waiting: [Int]
    /// Ready to start, kept in the operations' order.
    var ready: [Int] = []
    var outcomes: [String: OperationOutcome] = [:]
    var readySince: [Int: Date] = [:]
    var running = 0
    var indexes: [String: Int] = [:]
    var numbered = 0
    let started = Date()
    var workers: WorkerThreads?

    init(scheduler: Scheduler, onEvent: @escaping @Sendable (Scheduler.Event) -> Void) {
        self.scheduler = scheduler
        self.onEvent = onEvent
        operations = scheduler.operations
        position = Dictionary(operations.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        dependents = Array(repeating: [], count: operations.count)
        waiting = Array(repeating: 0, count: operations.count)
        for (index, operation) in operations.enumerated() {
            for need in Set(operation.needs) {
                guard let needed = position[need] else { continue }   // needs outside the run are satisfied
                dependents[needed].append(index)
                waiting[index] += 1
            }
        }
        let now = Date()
        for index in operations.indices where waiting[index] == 0 {
            ready.append(index)
            readySince[index] = now
        }
    }

    var total: Int { operations.count }

    mutating func number(_ name: String) -> Int {
        if let index = indexes[name] { return index }
        numbered += 1
        indexes[name] = numbered
        return numbered
    }

    mutating func execute() async {
        let workers = WorkerThreads(count: min(scheduler.maxConcurrent, max(1, operations.count)))
        defer { workers.shutDown() }
        self.workers = workers
        await withTaskGroup(of: OperationOutcome.self) { group in
            while true {
                await cancelIfNeeded()
                while running < scheduler.maxConcurrent, !ready.isEmpty {
                    let index = ready.removeFirst()
                    if operations[index].isCancelled {
                        await finish(OperationOutcome(name: operations[index].name, status: .cancelled, error: nil,
                                                      skippedBecause: nil, queuedSeconds: 0, runSeconds: 0))
                        continue
                    }
                    start(index, in: &group)
                }
                guard let outcome = await group.next() else { break }
                running -= 1
                await finish(outcome)
                if scheduler.failFast && outcome.status != .ok { scheduler.cancelAll() }
            }
        }
        await cancelIfNeeded()
    }

    /// After a cancel, every operation not started ends `cancelled`.
    private mutating func cancelIfNeeded() async {
        guard scheduler.isCancelled else { return }
        for operation in operations where outcomes[operation.name] == nil && !isRunning(operation) {
            await finish(OperationOutcome(name: operation.name, status: .cancelled, error: nil, skippedBecause: nil,
                                          queuedSeconds: 0, runSeconds: 0))
        }
        ready.removeAll()
    }

    private var startedNames: Set<String> = []

    private func isRunning(_ operation: BatchOperation) -> Bool {
        startedNames.contains(operation.name) && outcomes[operation.name] == nil
    }

    private mutating func start(_ index: Int, in group: inout TaskGroup<OperationOutcome>) {
        let operation = operations[index]
        running += 1
        startedNames.insert(operation.name)
        let queued = Date().timeIntervalSince(readySince[index] ?? started)
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

    /// Records a final outcome, runs the operation's hooks and completion block, then frees
    /// or skips the operations that need it.
    private mutating func finish(_ outcome: OperationOutcome) async {
        guard outcomes[outcome.name] == nil, let index = position[outcome.name] else { return }
        outcomes[outcome.name] = outcome
        onEvent(.finished(outcome, index: number(outcome.name), total: total))
        let operation = operations[index]
        if let finish = operation.finishBlock {
            await Scheduler.onThread { finish(outcome) }
        }
        if let completion = operation.completionBlock {
            if let main = scheduler.mainContext { await main.catchUp() }
            await MainActor.run { completion(outcome) }
        }
        let now = Date()
        for dependent in dependents[index] where outcomes[operations[dependent].name] == nil {
            if outcome.status.letsDependentsRun {
                waiting[dependent] -= 1
                if waiting[dependent] == 0 {
                    readySince[dependent] = now
                    insertReady(dependent)
                }
            } else if !scheduler.isCancelled {   // after a cancel of the run they end `cancelled`
                await finish(OperationOutcome(name: operations[dependent].name, status: .skipped, error: nil,
                                              skippedBecause: "\(outcome.name) \(outcome.status.rawValue)",
                                              queuedSeconds: 0, runSeconds: 0))
            }
        }
    }

    /// Keeps `ready` in the operations' order, so independent jobs start as they are written.
    private mutating func insertReady(_ index: Int) {
        if let last = ready.last, last > index {
            ready.insert(index, at: ready.firstIndex { $0 > index } ?? ready.endIndex)
        } else {
            ready.append(index)
        }
    }
}
