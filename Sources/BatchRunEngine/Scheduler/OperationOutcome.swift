import BatchRunStore

/// The final status and timing of an operation, with its error when it failed and its
/// result when it succeeded.
public struct OperationOutcome: Sendable {
    public var name: String
    public var status: JobStatus
    /// The error that ended a failed operation, as thrown (`MergeConflictError`, a `StepError`, ...).
    public var failure: (any Error)?
    /// For a timed-out operation, the limit it ran past, in seconds.
    package var timeLimit: Double?
    /// For a skipped operation: the needed one that did not succeed, and how it ended.
    public var skippedBecause: String?
    /// Seconds between being ready to start (its needs done) and starting.
    public var queuedSeconds: Double
    public var runSeconds: Double
    /// What the body returned, for a typed `BatchOperation` to hand to its completion block.
    package var value: (any Sendable)?

    package init(name: String, status: JobStatus, failure: (any Error)? = nil, timeLimit: Double? = nil,
                skippedBecause: String? = nil, queuedSeconds: Double = 0, runSeconds: Double = 0) {
        self.name = name
        self.status = status
        self.failure = failure
        self.timeLimit = timeLimit
        self.skippedBecause = skippedBecause
        self.queuedSeconds = queuedSeconds
        self.runSeconds = runSeconds
    }

    /// What went wrong, as a line of text: the failure's description, or the time limit.
    package var error: String? {
        if let failure { return "\(failure)" }
        if let timeLimit { return "timed out after \(String(format: "%g", timeLimit))s" }
        return nil
    }
}
