import Foundation
import Synchronization

/// Runs operations in dependency order with at most `maxConcurrent` at once, like an
/// `OperationQueue`, but a failed, timed-out or cancelled operation skips everything that needs it.
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
    private let cancelled = Mutex(false)

    public init(operations: [BatchOperation], maxConcurrent: Int = ProcessInfo.processInfo.activeProcessorCount,
                failFast: Bool = false) {
        self.operations = operations
        self.maxConcurrent = max(1, maxConcurrent)
        self.failFast = failFast
    }

    /// Cancels every operation: running ones stop at their next batch boundary, the rest never start.
    public func cancelAll() {
        cancelled.withLock { $0 = true }
        for operation in operations { operation.cancel() }
    }

    public var isCancelled: Bool { cancelled.withLock { $0 } }

    /// Runs everything and returns each operation's outcome, in the operations' order.
    public func run(onEvent: @escaping @Sendable (Event) -> Void = { _ in }) async -> [OperationOutcome] {
        let byName = Dictionary(uniqueKeysWithValues: operations.map { ($0.name, $0) })
        var outcomes: [String: OperationOutcome] = [:]
        var readySince: [String: Date] = [:]
        var running: Set<String> = []
        var startedCount = 0
        /// Each operation's number in the run, given when it starts (or ends without starting).
        var indexes: [String: Int] = [:]
        let total = operations.count
        let runStart = Date()

        func finish(_ outcome: OperationOutcome) {
            outcomes[outcome.name] = outcome
            if indexes[outcome.name] == nil {
                startedCount += 1
                indexes[outcome.name] = startedCount
            }
            onEvent(.finished(outcome, index: indexes[outcome.name]!, total: total))
            byName[outcome.name]?.completionBlock?(outcome)
        }

        /// Settles operations that can no longer run; returns those ready to start.
        func settle() -> [BatchOperation] {
            var ready: [BatchOperation] = []
            var changed = true
            while changed {
                changed = false
                for operation in operations where outcomes[operation.name] == nil && !running.contains(operation.name) {
                    if isCancelled || operation.isCancelled {
                        finish(OperationOutcome(name: operation.name, status: .cancelled, error: nil, skippedBecause: nil,
                                                queuedSeconds: 0, runSeconds: 0))
                        changed = true
                        continue
                    }
                    let needed = operation.needs.compactMap { name in byName[name] != nil ? name : nil }
                    if let blocker = needed.first(where: { outcomes[$0].map { !$0.status.letsDependentsRun } ?? false }) {
                        let status = outcomes[blocker]!.status
                        finish(OperationOutcome(name: operation.name, status: .skipped, error: nil,
                                                skippedBecause: "\(blocker) \(status.rawValue)", queuedSeconds: 0, runSeconds: 0))
                        changed = true
                        continue
                    }
                    if needed.allSatisfy({ outcomes[$0]?.status == .ok }) {
                        if readySince[operation.name] == nil { readySince[operation.name] = Date() }
                        if !ready.contains(where: { $0 === operation }) { ready.append(operation) }
                    }
                }
            }
            return ready
        }

        await withTaskGroup(of: OperationOutcome.self) { group in
            while true {
                for operation in settle() where running.count < maxConcurrent {
                    running.insert(operation.name)
                    startedCount += 1
                    indexes[operation.name] = startedCount
                    let queued = Date().timeIntervalSince(readySince[operation.name] ?? runStart)
                    onEvent(.started(name: operation.name, index: startedCount, total: total))
                    group.addTask {
                        let started = Date()
                        let result = await Self.runOnThread(operation)
                        let seconds = Date().timeIntervalSince(started)
                        switch result {
                        case .ok:
                            return OperationOutcome(name: operation.name, status: .ok, error: nil, skippedBecause: nil,
                                                    queuedSeconds: queued, runSeconds: seconds)
                        case .failed(let message):
                            return OperationOutcome(name: operation.name, status: .failed, error: message, skippedBecause: nil,
                                                    queuedSeconds: queued, runSeconds: seconds)
                        case .cancelled:
                            return OperationOutcome(name: operation.name, status: .cancelled, error: nil, skippedBecause: nil,
                                                    queuedSeconds: queued, runSeconds: seconds)
                        }
                    }
                }
                guard let outcome = await group.next() else { break }
                running.remove(outcome.name)
                finish(outcome)
                if failFast && outcome.status != .ok { cancelAll() }
            }
        }
        _ = settle()
        return operations.compactMap { outcomes[$0.name] }
    }

    /// The body may block on SQLite, so it runs on a Dispatch thread, not the cooperative pool.
    private static func runOnThread(_ operation: BatchOperation) async -> BatchOperation.Result {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: operation.body(operation))
            }
        }
    }
}
