import Foundation

/// Earlier runs of one job file on one store, oldest first: what the HTML report draws each
/// job's trend from (JOBFILE.md sections 9 and 12).
///
/// ```swift
/// let history = RunHistory(runs: [
///     RunHistory.Run(id: 41, startedAt: yesterday, status: .ok, jobSeconds: ["import_sessions": 1.9]),
///     RunHistory.Run(id: 42, startedAt: today, status: .failed, jobSeconds: ["import_sessions": 2.4]),
/// ])
/// history.runs(of: "import_sessions").map(\.seconds)   // [1.9, 2.4]
/// ```
package struct RunHistory: Sendable, Hashable {
    /// One earlier run: when it started, how it ended, and each job's run time in seconds
    /// (a job that did not run in it has no entry).
    package struct Run: Sendable, Hashable {
        package var id: Int64
        package var startedAt: Date
        package var status: RunReport.Status
        package var jobSeconds: [String: Double]

        package init(id: Int64, startedAt: Date, status: RunReport.Status, jobSeconds: [String: Double]) {
            self.id = id
            self.startedAt = startedAt
            self.status = status
            self.jobSeconds = jobSeconds
        }
    }

    /// Oldest first.
    package var runs: [Run]

    package init(runs: [Run]) {
        self.runs = runs.sorted { ($0.startedAt, $0.id) < ($1.startedAt, $1.id) }
    }

    /// The runs that ran the job, oldest first, each with the job's run time.
    package func runs(of job: String) -> [(run: Run, seconds: Double)] {
        runs.compactMap { run in run.jobSeconds[job].map { (run, $0) } }
    }
}

extension RunHistory {
    /// The history of `summaries` (as `batchrun runs` lists them), for trends: jobs done
    /// earlier in a resumed run did not run in it, and a run still marked `running` (its
    /// process died) counts as cancelled.
    package init(_ summaries: [RunSummary]) {
        self.init(runs: summaries.map { summary in
            Run(id: summary.id, startedAt: summary.startedAt,
                status: RunReport.Status(rawValue: summary.status.rawValue) ?? .cancelled,
                jobSeconds: Dictionary(summary.jobs.filter { !$0.doneEarlier }.map { ($0.name, $0.runSeconds) },
                                       uniquingKeysWith: { first, _ in first }))
        })
    }
}
