/// The exit statuses of a run (JOBFILE.md section 7), which a queue item's run ends with and a
/// `Worker` returns: the worst of its items', or `interrupted` when it was stopped.
///
/// ```swift
/// let status = Worker(queue: queue, executor: JobFileExecutor()).run()
/// if status == ExitStatus.failed { print("an item failed") }
/// ```
package enum ExitStatus {
    /// Every selected job succeeded.
    package static let ok: Int32 = 0
    /// A job failed or timed out.
    package static let failed: Int32 = 1
    /// The job file (or the command line) is invalid: nothing was run.
    package static let invalid: Int32 = 2
    /// The run was interrupted (SIGINT, a cancel): 128 + SIGINT.
    package static let interrupted: Int32 = 130
}
