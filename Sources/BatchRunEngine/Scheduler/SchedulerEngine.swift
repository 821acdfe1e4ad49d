import Foundation
import Synchronization

/// One run of a `Scheduler`: worker threads that take ready operations, run them, and free or
/// skip what needs them, all bookkeeping under one lock. For each operation it keeps how many
/// of its needs are unfinished; an operation is ready when that count reaches zero.
final class SchedulerEngine: Sendable {
    private struct State {
        var waiting: [Int]
        /// Ready to start, in the operations' order (a min-ordered list of positions).
        var ready: [Int] = []
        var readySince: [Date?]
        var outcomes: [OperationOutcome?]
        var started: [Bool]
        var finished = 0
        var numbered = 0
        var indexes: [Int?]
        var done: CheckedContinuation<[OperationOutcome], Never>?
        var stopped = false
    }

    private let scheduler: Scheduler
    private let onEvent: @Sendable (Scheduler.Event) -> Void
    private let operations: [OperationUnit]
    /// Per operation: the positions of the operations that need it.
    private let dependents: [[Int]]
    private let state: Mutex<State>
    private let wake = NSCondition()
    private let completions = CompletionTracker()
    private let begun = Date()

    package init(scheduler: Scheduler, onEvent: @escaping @Sendable (Scheduler.Event) -> Void) {
        self.scheduler = scheduler
        self.onEvent = onEvent
        operations = scheduler.operations.map(\.unit)
        let position = Dictionary(operations.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        var dependents = Array(repeating: [Int](), count: operations.count)
        var waiting = Array(repeating: 0, count: operations.count)
        for (index, operation) in operations.enumerated() {
            for need in Set(operation.needs) {
                guard let needed = position[need] else { continue }   // needs outside the run are satisfied
                dependents[needed].append(index)
                waiting[index] += 1
            }
        }
        self.dependents = dependents
        let now = Date()
        var initial = State(waiting: waiting, readySince: Array(repeating: nil, count: operations.count),
                            outcomes: Array(repeating: nil, count: operations.count),
                            started: Array(repeating: false, count: operations.count),
                            indexes: Array(repeating: nil, count: operations.count))
        for index in operations.indices where waiting[index] == 0 {
            initial.ready.append(index)
            initial.readySince[index] = now
        }
        state = Mutex(initial)
    }

    package func run() async -> [OperationOutcome] {
        await withCheckedContinuation { continuation in
            state.withLock { $0.done = continuation }
            for number in 0..<min(scheduler.maxConcurrent, operations.count) {
                let thread = Thread { [self] in work() }
                thread.name = "batchrun.worker.\(number)"
                thread.start()
            }
        }
    }

    func completionsDone() async {
        await completions.waitForAll()
    }

    // MARK: Workers

    private enum Task {
        case run(Int)
        case cancelled(Int)
        case stop
    }

    private func work() {
        while true {
            switch next() {
            case .stop:
                return
            case .cancelled(let index):
                end(index, OperationOutcome(name: operations[index].name, status: .cancelled))
            case .run(let index):
                end(index, execute(index))
            }
        }
    }

    /// The next thing for a worker to do; waits while nothing is ready but operations still run.
    private func next() -> Task {
        wake.lock()
        defer { wake.unlock() }
        while true {
            let task: Task? = state.withLock { state in
                if state.stopped { return .stop }
                if scheduler.isCancelled, let index = state.outcomes.indices.first(where: { !state.started[$0] }) {
                    state.started[index] = true
                    state.ready.removeAll { $0 == index }
                    return .cancelled(index)
                }
                guard !state.ready.isEmpty else { return nil }
                let index = state.ready.removeFirst()
                state.started[index] = true
                if operations[index].isCancelled { return .cancelled(index) }
                return .run(index)
            }
            if let task { return task }
            wake.wait()
        }
    }

    private func execute(_ index: Int) -> OperationOutcome {
        let operation = operations[index]
        let (queued, number) = state.withLock { state -> (Double, Int) in
            (Date().timeIntervalSince(state.readySince[index] ?? begun), Self.number(index, in: &state))
        }
        onEvent(.started(name: operation.name, index: number, total: operations.count))
        return operation.execute(timeout: scheduler.timeouts[operation.name], queuedSeconds: queued)
    }

    /// Records an outcome, runs hooks and the completion block, then frees or skips dependents.
    private func end(_ index: Int, _ outcome: OperationOutcome) {
        let operation = operations[index]
        operation.discardBody()   // one that ran has let go of it already
        let number = state.withLock { state -> Int in
            state.outcomes[index] = outcome
            return Self.number(index, in: &state)
        }
        onEvent(.finished(outcome, index: number, total: operations.count))
        operation.finishBlock?(outcome)
        if let completion = operation.completion {
            completions.add()
            let main = scheduler.mainContext
            _Concurrency.Task { @MainActor in
                if let main { await main.catchUp() }
                completion(outcome)
                completions.remove()
            }
        }
        if scheduler.failFast && outcome.status != .ok && outcome.status != .skipped { scheduler.cancelAll() }

        var skipped: [Int] = []
        let now = Date()
        let finishedAll = state.withLock { state -> Bool in
            state.finished += 1
            for dependent in dependents[index] where state.outcomes[dependent] == nil && !state.started[dependent] {
                if outcome.status.letsDependentsRun {
                    state.waiting[dependent] -= 1
                    if state.waiting[dependent] == 0 {
                        state.readySince[dependent] = now
                        let at = state.ready.firstIndex { $0 > dependent } ?? state.ready.endIndex
                        state.ready.insert(dependent, at: at)
                    }
                } else if !scheduler.isCancelled {   // after a cancel of the run they end `cancelled`
                    state.started[dependent] = true
                    skipped.append(dependent)
                }
            }
            return state.finished == operations.count
        }
        for dependent in skipped {
            end(dependent, OperationOutcome(name: operations[dependent].name, status: .skipped,
                                            skippedBecause: "\(operation.name) \(outcome.status.rawValue)"))
        }
        wake.lock()
        if finishedAll {
            let continuation = state.withLock { state -> CheckedContinuation<[OperationOutcome], Never>? in
                guard !state.stopped else { return nil }
                state.stopped = true
                defer { state.done = nil }
                return state.done
            }
            let outcomes = state.withLock { $0.outcomes.compactMap { $0 } }
            continuation?.resume(returning: outcomes)
        }
        wake.broadcast()
        wake.unlock()
    }

    private static func number(_ index: Int, in state: inout State) -> Int {
        if let number = state.indexes[index] { return number }
        state.numbered += 1
        state.indexes[index] = state.numbered
        return state.numbered
    }
}

/// Counts completion blocks still to run on the main actor, so a run ends after all of them.
private final class CompletionTracker: Sendable {
    private let state = Mutex<(pending: Int, waiters: [CheckedContinuation<Void, Never>])>((0, []))

    func add() { state.withLock { $0.pending += 1 } }

    func remove() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.pending -= 1
            guard state.pending == 0 else { return [] }
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func waitForAll() async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                if state.pending == 0 { return true }
                state.waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }
}
