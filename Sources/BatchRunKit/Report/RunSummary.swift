import Foundation

/// One past run of a job file, as `batchrun runs` lists it: when, how it ended, how long it
/// took, its rows, and each job's run time (the history behind the HTML report's trends).
public struct RunSummary: Sendable, Hashable, Codable {
    /// One job's part of the run.
    public struct JobTime: Sendable, Hashable, Codable {
        public var name: String
        public var status: String
        public var runSeconds: Double
        /// True when the run continued an earlier one that had finished this job.
        public var doneEarlier: Bool

        public init(name: String, status: String, runSeconds: Double, doneEarlier: Bool) {
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

    public var id: Int64
    public var startedAt: String
    public var endedAt: String?
    /// `ok`, `failed`, `cancelled`, or `running` (still running, or its process died).
    public var status: String
    public var elapsedSeconds: Double?
    public var resumedFrom: Int64?
    public var rows: RowCounts
    public var jobs: [JobTime]

    public init(id: Int64, startedAt: String, endedAt: String?, status: String, elapsedSeconds: Double?,
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
