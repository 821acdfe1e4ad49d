/// What every error BatchRunKit throws on purpose has, whatever its domain: a stable code, a
/// message, where it happened, and whether it is the input that is wrong. Each domain has one
/// such type (`JobFileError`, `StoreError`, `ContextError`, `MergeConflictError`,
/// `RunOpeningError`, `StepError`, `FeedError`, `FileAccessError`); they are thrown, never
/// printed, and the command alone turns them into output and an exit status.
///
/// ```swift
/// catch let error as any BatchRunError {
///     print(error.code, error.location?.description ?? "-", error.message)
///     // store.cannot-open - cannot open store /data/a.db: unable to open database file
/// }
/// ```
package protocol BatchRunError: Error, Sendable, CustomStringConvertible {
    /// `DOMAIN.KIND`, stable from one version to the next: `store.cannot-open`, `jobfile.invalid`.
    var code: String { get }
    /// What went wrong and, where there is something to do, what to do; the location is not in it.
    var message: String { get }
    /// Where: a job file's line and column, a feed's line; nil when it is nowhere in particular.
    var location: SourceLocation? { get }
    /// True when what was given is wrong (exit status 2, nothing run); false when running it
    /// failed (exit status 1).
    var isInvalid: Bool { get }
}

extension BatchRunError {
    package var location: SourceLocation? { nil }
    package var isInvalid: Bool { false }
}
