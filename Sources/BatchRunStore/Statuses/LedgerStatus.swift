/// A run's or a job's status as the run ledger records it: `running` until it ends, then how it
/// ended (a run ends `ok`, `failed` or `cancelled`; a job also `timed_out` or `skipped`). A run
/// still `running` whose process is gone died without ending.
///
/// ```swift
/// LedgerStatus(recorded: "timed_out")   // .timedOut
/// LedgerStatus.running.rawValue         // "running"
/// ```
package enum LedgerStatus: String, Sendable, Hashable, Codable, CaseIterable {
    case running, ok, failed
    case timedOut = "timed_out"
    case cancelled, skipped

    /// The status a ledger row holds; a value this version does not know reads as `failed`.
    package init(recorded text: String?) {
        self = text.flatMap(LedgerStatus.init(rawValue:)) ?? .failed
    }

    /// How a job that ended, ended.
    package init(_ status: JobStatus) {
        self = LedgerStatus(rawValue: status.rawValue) ?? .failed
    }
}
