import BatchRunStore
import BatchRunContext
import Foundation
import Synchronization

/// One unit of work, like Foundation's `Operation`: a name, the operations it needs, work
/// that returns a `Value`, cancellation, a per-save block, and a completion block on the main
/// actor that runs however the operation ended (also when it was cancelled or skipped before
/// it started) and receives the value the work returned.
///
/// The usual shape owns a private context, in the style of the Core Data operation libraries:
///
/// ```swift
/// let close = BatchOperation(name: "close_stale", store: store, mergePolicy: .objectTrump) { operation, context -> Int in
///     var request = FetchRequest(entity: "Session", where: "status = 'open'", limit: 1000)
///     request.assigning = [("status", "'stale'")]
///     var closed = 0
///     while !operation.isCancelled {
///         let batch = try context.fetch(request)
///         guard let last = batch.last else { break }
///         request.after = last.objectID
///         closed += try context.saveAndReset().updated
///     }
///     return closed
/// }
/// close.didSaveBlock = { result in print("saved \(result.updated) rows") }
/// close.completionBlock = { result in print(result.name, result.status, result.value ?? 0) }   // on the main actor
/// ```
///
/// A `Scheduler` runs operations in dependency order; one operation also runs on its own:
/// `start()` begins it on a thread of its own, `await run()` waits for its result.
public final class BatchOperation<Value: Sendable>: ScheduledOperation {
    public let unit: OperationUnit

    package var name: String { unit.name }
    package var needs: [String] { unit.needs }

    /// `work` runs on a thread of its own (it may block on SQLite) and should check
    /// `isCancelled` at every batch boundary. Throwing `CancellationError`, or returning after
    /// the operation was cancelled, ends it as cancelled; any other error as failed.
    public init(name: String, needs: [String] = [], work: @escaping @Sendable (BatchOperation<Value>) throws -> Value) {
        unit = OperationUnit(name: name, needs: needs)
        unit.setBody { [self] in
            do {
                let value = try work(self)
                return unit.isCancelled ? .cancelled : .ok(value)
            } catch is CancellationError {
                return .cancelled
            } catch {
                return unit.isCancelled ? .cancelled : .failed(error)
            }
        }
    }

    /// An operation with its own private context on `store`, named after the operation.
    /// `work` runs on the context's queue.
    public convenience init(name: String, needs: [String] = [], store: Store, mergePolicy: MergePolicy = .error,
                            work: @escaping @Sendable (BatchOperation<Value>, isolated Context) throws -> Value) {
        self.init(name: name, needs: needs) { operation in
            let context = Context(store: store, name: name, mergePolicy: mergePolicy)
            operation.onCancel { [weak context] in context?.interrupt() }
            return try context.performAndWait { context in
                if operation.didSaveBlock != nil {
                    context.didSaveBlock = { result in operation.didSaveBlock?(result) }
                }
                return try work(operation, context)
            }
        }
    }

    /// Asks the operation to stop at its next batch boundary (an operation with a context also
    /// has its statement in flight interrupted); an operation not yet started never starts.
    public func cancel() { unit.cancel() }

    /// Runs `handler` when the operation is cancelled (at once if it already is).
    public func onCancel(_ handler: @escaping @Sendable () -> Void) { unit.onCancel(handler) }

    public var isCancelled: Bool { unit.isCancelled }

    /// Runs on the main actor once the operation has a final status: ok, failed, timed out,
    /// cancelled or skipped, with the value its work returned when it succeeded. With a
    /// `MainContext` given to the scheduler, that context has merged every save the operation
    /// made before the block runs.
    public var completionBlock: (@MainActor @Sendable (OperationResult<Value>) -> Void)? {
        get { typedCompletion }
        set {
            typedCompletion = newValue
            if let newValue {
                unit.completion = { @MainActor outcome in
                    newValue(OperationResult(outcome: outcome, value: outcome.value as? Value))
                }
            } else {
                unit.completion = nil
            }
        }
    }

    /// Runs after each save of the operation's context, on the context's queue.
    public var didSaveBlock: (@Sendable (SaveResult) -> Void)? {
        get { unit.didSave }
        set { unit.didSave = newValue }
    }

    /// Begins the operation on a thread of its own, without a scheduler; its completion block
    /// runs when it ends. Call `start()` or `run()` once.
    public func start() {
        Task { _ = await run() }
    }

    /// Runs the operation without a scheduler and returns how it ended, after its completion
    /// block ran. Call `start()` or `run()` once.
    ///
    /// ```swift
    /// let result = await BatchOperation(name: "count", store: store) { _, context in
    ///     try context.count(FetchRequest(entity: "Session"))
    /// }.run()
    /// print(result.value ?? 0)
    /// ```
    public func run() async -> OperationResult<Value> {
        let unit = self.unit
        let outcome = await withCheckedContinuation { continuation in
            let thread = Thread {
                continuation.resume(returning: unit.isCancelled
                    ? OperationOutcome(name: unit.name, status: .cancelled)
                    : unit.execute(timeout: nil, queuedSeconds: 0))
            }
            thread.name = "batchrun.operation.\(unit.name)"
            thread.start()
        }
        unit.finishBlock?(outcome)
        if let completion = unit.completion { await completion(outcome) }
        return OperationResult(outcome: outcome, value: outcome.value as? Value)
    }

    private let typedCompletionBlock = Mutex<Callback<@MainActor @Sendable (OperationResult<Value>) -> Void>?>(nil)
    private var typedCompletion: (@MainActor @Sendable (OperationResult<Value>) -> Void)? {
        get { typedCompletionBlock.withLock { $0 }?.function }
        set { typedCompletionBlock.withLock { $0 = newValue.map(Callback.init) } }
    }
}
