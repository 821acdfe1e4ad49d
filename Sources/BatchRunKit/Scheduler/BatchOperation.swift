import Synchronization

/// One unit of scheduled work, like Foundation's `Operation`: a name, the operations it needs,
/// a body, cancellation, a per-save block and a completion block on the main actor that runs
/// however the operation ended (also when it was cancelled or skipped before it started).
///
/// The usual shape owns a private context, in the style of the Core Data operation libraries:
///
/// ```swift
/// let close = BatchOperation(name: "close_stale", store: store, mergePolicy: .objectTrump) { operation, context in
///     var request = FetchRequest(entity: "Session", where: "status = 'open'", limit: 1000)
///     request.assigning = [("status", "'stale'")]
///     while !operation.isCancelled {
///         let batch = try context.fetch(request)
///         guard let last = batch.last else { break }
///         request.after = last.objectID
///         try context.save()
///         context.reset()
///     }
/// }
/// close.didSaveBlock = { result in print("saved \(result.updated) rows") }
/// close.completionBlock = { outcome in print(outcome.name, outcome.status) }   // on the main actor
/// ```
public final class BatchOperation: Sendable {
    /// How the body ended.
    public enum Result: Sendable, Equatable {
        case ok
        case failed(String)
        case cancelled
    }

    public let name: String
    public let needs: [String]
    let body: @Sendable (BatchOperation) -> Result
    private let state = Mutex(State())

    private struct State {
        var cancelled = false
        var timedOut = false
        var completion: (@MainActor @Sendable (OperationOutcome) -> Void)?
        var didSave: (@Sendable (SaveResult) -> Void)?
        var finish: (@Sendable (OperationOutcome) -> Void)?
        var onCancel: [@Sendable () -> Void] = []
    }

    /// `body` runs on a thread of its own (it may block on SQLite) and should check
    /// `isCancelled` at every batch boundary.
    public init(name: String, needs: [String] = [], body: @escaping @Sendable (BatchOperation) -> Result) {
        self.name = name
        self.needs = needs
        self.body = body
    }

    /// An operation with its own private context on `store`, named after the operation.
    /// `work` runs on the context's queue; throwing `CancellationError` (or returning after
    /// seeing `isCancelled`) ends it as cancelled, any other error as failed.
    public convenience init(name: String, needs: [String] = [], store: Store, mergePolicy: MergePolicy = .error,
                            work: @escaping @Sendable (BatchOperation, isolated Context) throws -> Void) {
        self.init(name: name, needs: needs) { operation in
            let context = Context(store: store, name: name, mergePolicy: mergePolicy)
            operation.onCancel { [weak context] in context?.interrupt() }
            do {
                try context.performAndWait { context in
                    context.didSaveBlock = { result in operation.didSaveBlock?(result) }
                    try work(operation, context)
                }
                return operation.isCancelled ? .cancelled : .ok
            } catch is CancellationError {
                return .cancelled
            } catch {
                return operation.isCancelled ? .cancelled : .failed("\(error)")
            }
        }
    }

    /// Asks the operation to stop at its next batch boundary (an operation with a context also
    /// has its statement in flight interrupted); an operation not yet started never starts.
    public func cancel() {
        let handlers = state.withLock { state in
            state.cancelled = true
            return state.onCancel
        }
        for handler in handlers { handler() }
    }

    /// Runs `handler` when the operation is cancelled (at once if it already is).
    public func onCancel(_ handler: @escaping @Sendable () -> Void) {
        let already = state.withLock { state in
            state.onCancel.append(handler)
            return state.cancelled
        }
        if already { handler() }
    }

    public var isCancelled: Bool {
        state.withLock { $0.cancelled }
    }

    /// Cancels because the operation ran past its time limit: it ends as `timed_out`.
    func timeOut() {
        state.withLock { $0.timedOut = true }
        cancel()
    }

    var isTimedOut: Bool {
        state.withLock { $0.timedOut }
    }

    /// Runs on the main actor once the operation has a final status: ok, failed, timed out,
    /// cancelled or skipped. With a `MainContext` given to the scheduler, that context has
    /// merged every save the operation made before the block runs.
    public var completionBlock: (@MainActor @Sendable (OperationOutcome) -> Void)? {
        get { state.withLock { $0.completion } }
        set { state.withLock { $0.completion = newValue } }
    }

    /// Runs after each save of the operation's context, on the context's queue.
    public var didSaveBlock: (@Sendable (SaveResult) -> Void)? {
        get { state.withLock { $0.didSave } }
        set { state.withLock { $0.didSave = newValue } }
    }

    /// Runs off the main actor, before the completion block: the job file's shell hooks.
    var finishBlock: (@Sendable (OperationOutcome) -> Void)? {
        get { state.withLock { $0.finish } }
        set { state.withLock { $0.finish = newValue } }
    }
}

/// The final status and timing of an operation.
public struct OperationOutcome: Sendable, Equatable {
    public var name: String
    public var status: JobStatus
    public var error: String?
    /// For a skipped operation: the needed one that did not succeed, and how it ended.
    public var skippedBecause: String?
    /// Seconds between being ready to start (its needs done) and starting.
    public var queuedSeconds: Double
    public var runSeconds: Double
}
