import BatchRunContext
import Foundation

extension JobFileRun {
    /// The report of the latest run of `file` in `store`, rebuilt from its run state: status,
    /// start, elapsed time, and each job's status, run time, error and rows (this attempt and
    /// all attempts). Not its conflicts, which the store does not keep. For a run whose process
    /// ended after the run was recorded but before its report was written; nil when `file` has
    /// no run in `store`.
    ///
    /// ```swift
    /// if let report = try JobFileRun.recordedReport(of: file, in: store), report.status == .ok {
    ///     try report.writeJSON(to: "var/nightly.json")
    /// }
    /// ```
    package static func recordedReport(of file: JobFile, in store: Store) throws -> RunReport? {
        let ledger = RunLedger(store: store)
        guard let run = try ledger.latestRun(file: identity(of: file)) else { return nil }
        let startedAt = run.startedAt
        // In the job file's order, as a run's own report lists them.
        let order = Dictionary(file.jobs.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        let jobs = try ledger.jobReports(of: run.id).sorted { order[$0.name, default: .max] < order[$1.name, default: .max] }
        var report = RunReport(file: file.runIdentity ?? file.path, store: store.path,
                               status: RunReport.Status(rawValue: run.status.rawValue) ?? .failed,
                               startedAt: startedAt, elapsedSeconds: run.elapsedSeconds ?? 0, jobs: jobs)
        report.part = file.part
        report.runID = run.id
        report.resumedFrom = run.resumedFrom
        return report
    }
}
