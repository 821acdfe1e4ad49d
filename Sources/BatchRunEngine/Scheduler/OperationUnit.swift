import BatchRunContext
import Foundation
import Synchronization

/// Something a `Scheduler` runs: a `BatchOperation` of any result type.
public protocol ScheduledOperation: AnyObject, Sendable {
    /// The scheduler's side of the operation: its name, needs, body and cancellation.
    var unit: OperationUnit { get }
}

/// The scheduler's side of one operation, whatever its result type: name, needs, the body,
/// cancellation, the time limit, and the blocks that run when it ends. `BatchOperation` wraps it.
public final class OperationUnit: Sendable {
    /// How a body ended.
    enum Ending: Sendable {
        case ok(any Sendable)
        case failed(any Error)
        case cancelled
    }

    package let name: String
    package let needs: [String]
    private let state = Mutex(State())

    private struct State {
        var body: (@Sendable () -> Ending)?
        var cancelled = false
        var timedOut = false
        var completion: (@MainActor @Sendable (OperationOutcome) -> Void)?
        var didSave: (@Sendable (SaveResult) -> Void)?
        var finish: (@Sendable (OperationOutcome) -> Void)?
        var onCancel: [@Sendable () -> Void] = []
    }

    package init(name: String, needs: [String]) {
        self.name = name
        self.needs = needs
    }

    /// Set once by the operation that owns this unit.
    func setBody(_ body: @escaping @Sendable () -> Ending) {
        state.withLock { $0.body = body }
    }

    /// Runs the body once (it is dropped afterwards, which frees what it holds).
    func runBody() -> Ending {
        guard let body = state.withLock({ state -> (@Sendable () -> Ending)? in
            defer { state.body = nil }
            return state.body
        }) else { return .cancelled }
        return body()
    }

    /// Lets go of the body of an operation that ends without running (skipped, or cancelled
    /// before it started). The body holds its operation, which holds this unit, and whatever the
    /// operation captured (its context, and so the store): `runBody` breaks that cycle, and this
    /// for an operation that never ran. Without it a run with a skipped job never closed its store.
    func discardBody() {
        state.withLock { $0.body = nil }
    }

    /// Runs the body on the calling thread with an optional time limit and returns the outcome.
    package func execute(timeout: Double?, queuedSeconds: Double) -> OperationOutcome {
        let timer = timeout.map { seconds in
            Task.detached { [self] in
                try? await Task.sleep(for: .seconds(seconds))
                if !Task.isCancelled { timeOut() }
            }
        }
        let started = Date()
        let ending = runBody()
        timer?.cancel()
        var outcome = OperationOutcome(name: name, status: .ok, queuedSeconds: queuedSeconds,
                                       runSeconds: Date().timeIntervalSince(started))
        switch ending {
        case _ where isTimedOut:
            outcome.status = .timedOut
            outcome.timeLimit = timeout
        case .ok(let value):
            outcome.status = .ok
            outcome.value = value
        case .failed(let error):
            outcome.status = .failed
            outcome.failure = error
        case .cancelled:
            outcome.status = .cancelled
        }
        return outcome
    }

    package func cancel() {
        let handlers = state.withLock { state in
            state.cancelled = true
            return state.onCancel
        }
        for handler in handlers { handler() }
    }

    func onCancel(_ handler: @escaping @Sendable () -> Void) {
        let already = state.withLock { state in
            state.onCancel.append(handler)
            return state.cancelled
        }
        if already { handler() }
    }

    package var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Cancels because the operation ran past its time limit: it ends as `timed_out`.
    func timeOut() {
        state.withLock { $0.timedOut = true }
        cancel()
    }

    var isTimedOut: Bool { state.withLock { $0.timedOut } }

    package var completion: (@MainActor @Sendable (OperationOutcome) -> Void)? {
        get { state.withLock { $0.completion } }
        set { state.withLock { $0.completion = newValue } }
    }

    package var didSave: (@Sendable (SaveResult) -> Void)? {
        get { state.withLock { $0.didSave } }
        set { state.withLock { $0.didSave = newValue } }
    }

    /// Runs off the main actor, before the completion block: the job file's shell hooks.
    var finishBlock: (@Sendable (OperationOutcome) -> Void)? {
        get { state.withLock { $0.finish } }
        set { state.withLock { $0.finish = newValue } }
    }
}
