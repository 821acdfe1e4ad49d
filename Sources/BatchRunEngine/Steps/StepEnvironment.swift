import BatchRunStore
import BatchRunContext
import BatchRunFeeds
import Foundation

/// What a step needs to run: its entity, resolved params, batch size, merge policy, and how to
/// learn that the job was cancelled.
package struct StepEnvironment: Sendable {
    package var job: String
    package var entity: Entity
    /// Every placeholder's value, the step's params merged over the file's.
    package var params: [String: StoreValue]
    package var batchSize: Int
    package var mergePolicy: MergePolicy
    /// True once the job is cancelled; steps check it at every batch boundary.
    package var isCancelled: @Sendable () -> Bool
    /// What a confined worker lets the item take (`--max-*`), shared by its steps; nil: no limits.
    package var budget: ItemBudget?
    /// Called after each committed batch with the step's running totals.
    package var progress: @Sendable (RowCounts) -> Void
    /// Told, before the first batch, how many rows the step expects to change (a batch-update's
    /// estimate), so that its progress can be shown as a part of the whole.
    package var expecting: @Sendable (Int) -> Void = { _ in }
    /// How many times a batch that failed on a busy or locked store, or on a conflict under
    /// `error`, is tried again from a fresh read.
    package var retries = 0
    /// Seconds a lost connection to the server is made again for, from the first loss, before
    /// the batch in flight fails (the store's `reconnect`).
    package var reconnect = StoreSpec.defaultReconnect
    /// Told why a batch is about to be tried again.
    package var onRetry: @Sendable (String) -> Void = { _ in }
    /// Where a resumed step starts again: after its last committed batch.
    var resumeAt: StepPosition?
    /// Writes the step's checkpoint in the transaction of each batch (set by a job-file run).
    var checkpoint: StepCheckpoint?
    /// A feed in parts: the list an earlier attempt of the run recorded, which a resumed step
    /// reads on (nil: the step lists its parts afresh and records them with its first batch).
    var parts: [FeedPart]?

    package init(job: String, entity: Entity, params: [String: StoreValue], batchSize: Int, mergePolicy: MergePolicy,
                isCancelled: @escaping @Sendable () -> Bool = { false }, budget: ItemBudget? = nil,
                progress: @escaping @Sendable (RowCounts) -> Void = { _ in }) {
        self.job = job
        self.entity = entity
        self.params = params
        self.batchSize = batchSize
        self.mergePolicy = mergePolicy
        self.isCancelled = isCancelled
        self.budget = budget
        self.progress = progress
    }
}

extension StepEnvironment {
    /// Whether a feed's reader that failed with `message` was stopped by a cancel (this job's, or
    /// the one a limit reached elsewhere made) rather than by its feed or by the limit itself,
    /// which then fails the step with its place in the feed.
    package func stoppedByCancel(failure message: String) -> Bool {
        guard isCancelled() else { return false }
        guard let reached = budget?.reached else { return true }
        return !message.contains(reached.message)
    }

    /// What a feed's reader asks after each chunk: this job's cancel, and the item's limits.
    package var feedWatch: FeedWatch {
        FeedWatch(isCancelled: isCancelled, budget: budget)
    }

    /// Runs one batch, trying it again (`body` must start from a fresh read) when it failed on
    /// a busy or locked store or a conflict under `error`, up to `retries` times; `retried`
    /// is told of each new try. A batch the database rolled back for another transaction's
    /// sake (a deadlock, a serialization failure on PostgreSQL) is tried again whatever
    /// `retries` says, up to `rolledBackRetries` times (or `retries`, when larger): the database
    /// asks for that, and nothing of the batch was kept. A batch whose connection to the server
    /// was lost is tried again once a new one is made, for up to `reconnect` seconds
    /// (`Reconnection`); `reconnected` is told when it then went through.
    ///
    /// `committed` is asked after a lost connection, before the batch is tried again: the
    /// batch's outcome when it committed after all (the server committed, the answer was lost
    /// with the connection), so that it is not applied twice; nil when it did not.
    func withRetries<T>(retried: () -> Void, reconnected: () -> Void = {}, committed: () throws -> T? = { nil },
                        _ body: () throws -> T) throws -> T {
        var reconnection = Reconnection(window: reconnect)
        defer { for _ in 0..<reconnection.reconnects { reconnected() } }
        return try reconnection.run(isCancelled: isCancelled, alreadyDone: committed) {
            try retrying(retried: retried, body)
        }
    }

    /// After a lost connection: when the step's checkpoint in the store moved on from `before`
    /// (the position the batch started from), the batch committed; its position then, and the
    /// rows it changed (the checkpoint's totals less what earlier attempts and `rowsSoFar`, the
    /// step's committed rows in this attempt, account for). Nil when it did not commit, or the
    /// step has no checkpoints (a run that records nothing: its batch is tried again).
    func committedBatch(after before: StepPosition?, rowsSoFar: RowCounts) throws -> (position: StepPosition, rows: RowCounts)? {
        guard let checkpoint, let stored = try checkpoint.stored(), let position = stored.position, position != before else { return nil }
        let earlier = checkpoint.earlierRows
        return (position, RowCounts(inserted: max(0, stored.rows.inserted - earlier.inserted - rowsSoFar.inserted),
                                    updated: max(0, stored.rows.updated - earlier.updated - rowsSoFar.updated),
                                    deleted: max(0, stored.rows.deleted - earlier.deleted - rowsSoFar.deleted)))
    }

    /// `withRetries` but for a lost connection.
    private func retrying<T>(retried: () -> Void, _ body: () throws -> T) throws -> T {
        var attempt = 0, rolledBack = 0
        while true {
            do {
                return try body()
            } catch where Self.wasRolledBackForAnother(error) && rolledBack < max(retries, Self.rolledBackRetries) && !isCancelled() {
                rolledBack += 1
                // Apart, so that the two transactions do not meet again at once. A cancel during
                // the wait ends the batch with its error, as a cancel before it does.
                guard Self.rolledBackBackoff.wait(before: rolledBack, until: isCancelled) else { throw error }
                retried()
                onRetry(StepErrors.describe((error as? StepError)?.cause ?? error))
            } catch where attempt < retries && Self.isRetryable(error) && !isCancelled() {
                attempt += 1
                // A busy store is given a moment to clear; a conflict is retried at once.
                if !(error is MergeConflictError) {
                    guard Self.busyBackoff.wait(before: attempt, until: isCancelled) else { throw error }
                }
                retried()
                onRetry(StepErrors.describe((error as? StepError)?.cause ?? error))
            }
        }
    }

    /// Before a batch rolled back for another transaction's sake is tried again: 10 to 50 ms
    /// (at random) times the try's number.
    static let rolledBackBackoff = Backoff.linear(0.01...0.05)

    /// Before a batch that met a busy store is tried again: 50 ms times the try's number.
    static let busyBackoff = Backoff.linear(0.05)

    /// How many times a batch rolled back for another transaction's sake is tried again.
    static let rolledBackRetries = 10

    static func wasRolledBackForAnother(_ error: any Error) -> Bool {
        StoreFailure(of: underlying(error)) == .rolledBackForAnother
    }

    static func isRetryable(_ error: any Error) -> Bool {
        let error = underlying(error)
        return error is MergeConflictError || StoreFailure(of: error) == .busy
    }

    /// The error beneath a step's errors.
    private static func underlying(_ error: any Error) -> any Error {
        if let error = error as? StepError, let cause = error.cause { return underlying(cause) }
        return error
    }
}

/// A step stopped, failed or cancelled; what it had committed before stays committed and is in
/// `report`. Its code and location are those of the error underneath (`feed.malformed` at the
/// feed's line, `conflict.constraint`), or `step.failed`/`step.cancelled`.
///
/// ```swift
/// throw StepError.cancelled(report: report)
/// throw StepError("insert Person: disk full", report: report, cause: error)
/// ```
package struct StepError: BatchRunError, UnderlyingError {
    package enum Kind: Sendable, Equatable {
        case failed, cancelled
    }

    package var kind: Kind
    package var message: String
    package var report: StepReport
    /// The error underneath, when there is one (for deciding whether to retry).
    package var cause: (any Error)?

    /// A failed step: `message` says what failed, `cause` is the error underneath.
    package init(_ message: String, report: StepReport, cause: (any Error)? = nil) {
        self.kind = .failed
        self.message = message
        self.report = report
        self.cause = cause
    }

    /// A step stopped by cancellation (Ctrl-C, a timeout, a cancelled operation).
    package static func cancelled(report: StepReport) -> StepError {
        var error = StepError("cancelled", report: report)
        error.kind = .cancelled
        return error
    }

    package var code: String {
        if kind == .cancelled { return "step.cancelled" }
        return (cause as? any BatchRunError)?.code ?? "step.failed"
    }

    package var location: SourceLocation? { (cause as? any BatchRunError)?.location }
    package var description: String { message }

    package var underlyingError: (any Error)? { cause }
}

/// A path as users want to read it: relative to the current folder when it is inside it.
package func displayPath(_ path: String) -> String {
    if path.contains("://") { return RemoteFeed.redacted(path) }   // a URL: its query may hold a token
    let current = FileManager.default.currentDirectoryPath
    let prefix = current.hasSuffix("/") ? current : current + "/"
    return path.hasPrefix(prefix) ? String(path.dropFirst(prefix.count)) : path
}

/// Writes a step's checkpoint inside a batch's transaction: the step's new position, and the
/// rows this batch adds to the step's totals.
struct StepCheckpoint: Sendable {
    package let write: @Sendable (any StoreConnection, StepPosition, RowCounts) throws -> Void
    /// Records a feed's parts (`RunLedger.recordParts`), in the transaction of the step's first batch.
    var recordParts: @Sendable (any StoreConnection, [FeedPart]) throws -> Void = { _, _ in }
    /// The step's checkpoint as the store holds it now (its position, and its rows over every
    /// attempt), read outside any batch; nil when there is none.
    package var stored: @Sendable () throws -> (position: StepPosition?, rows: RowCounts)? = { nil }
    /// The step's rows from earlier attempts, as its checkpoint held them when this attempt began.
    var earlierRows = RowCounts()

    /// The same, as the save path takes it.
    /// `parts`: a feed's parts, recorded in the same transaction (the step's first batch).
    package func at(_ position: StepPosition, rejected: Int = 0, recording parts: [FeedPart]? = nil) -> SendableCheckpointWrite {
        { [recordParts] db, changes in
            if let parts { try recordParts(db, parts) }
            try write(db, position, RowCounts(inserted: changes.inserted, updated: changes.updated, deleted: changes.deleted,
                                              rejected: rejected))
        }
    }
}
