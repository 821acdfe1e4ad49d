import Synchronization

/// One unit of scheduled work, like Foundation's `Operation`: a name, the operations it needs,
/// a body, cancellation, and a completion block that runs however it ended.
///
/// ```swift
/// let load = BatchOperation(name: "load") { operation in
///     for batch in batches {
///         if operation.isCancelled { return .cancelled }
///         try? write(batch)
///     }
///     return .ok
/// }
/// load.completionBlock = { outcome in print(load.name, outcome.status) }
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
        var completion: (@Sendable (OperationOutcome) -> Void)?
    }

    /// `body` runs on a thread of its own (it may block on SQLite) and should check
    /// `isCancelled` at every batch boundary.
    public init(name: String, needs: [String] = [], body: @escaping @Sendable (BatchOperation) -> Result) {
        self.name = name
        self.needs = needs
        self.body = body
    }

    /// Asks the operation to stop at its next batch boundary; an operation not yet started never starts.
    public func cancel() {
        state.withLock { $0.cancelled = true }
    }

    public var isCancelled: Bool {
        state.withLock { $0.cancelled }
    }

    /// Runs once the operation has a final status: ok, failed, cancelled or skipped.
    public var completionBlock: (@Sendable (OperationOutcome) -> Void)? {
        get { state.withLock { $0.completion } }
        set { state.withLock { $0.completion = newValue } }
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
