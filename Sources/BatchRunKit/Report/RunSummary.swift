import Foundation

/// One past run of a job file, as `batchrun runs` lists it: when, how it ended, how long it
/// took, its rows, and each job's run time (the history behind the HTML report's trends).
package struct RunSummary: Sendable, Hashable, Codable {
    /// One job's part of the run.
    package struct JobTime: Sendable, Hashable, Codable {
        package var name: String
        package var status: String
        package var runSeconds: Double
        /// True when the run continued an earlier one that had finished this job.
        package var doneEarlier: Bool

        package init(name: String, status: String, runSeconds: Double, doneEarlier: Bool) {
            self.name = name
            self.status = status
            self.runSeconds = runSeconds
            self.doneEarlier = doneEarlier
        }

        enum CodingKeys: String, CodingKey {
            case name, status
            case runSeconds = "run_s"
            case doneEarlier = "done_earlier"
        }
    }

    package var id: Int64
    package var startedAt: String
    package var endedAt: String?
    /// `ok`, `failed`, `cancelled`, or `running` (still running, or its process died).
    package var status: String
    package var elapsedSeconds: Double?
    package var resumedFrom: Int64?
    package var rows: RowCounts
    package var jobs: [JobTime]

    package init(id: Int64, startedAt: String, endedAt: String?, status: String, elapsedSeconds: Double?,
                resumedFrom: Int64?, rows: RowCounts, jobs: [JobTime]) {
        self.id = id
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.status = status
        self.elapsedSeconds = elapsedSeconds
        self.resumedFrom = resumedFrom
        self.rows = rows
        self.jobs = jobs
    }

    enum CodingKeys: String, CodingKey {
        case id, status, rows, jobs
        case startedAt = "started_at"
        case endedAt = "ended_at"
        case elapsedSeconds = "elapsed_s"
        case resumedFrom = "resumed_from"
    }
}
