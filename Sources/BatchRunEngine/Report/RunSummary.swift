import BatchRunStore
import Foundation

/// One past run of a job file, as `batchrun runs` lists it: when, how it ended, how long it
/// took, its rows, and each job's run time (the history behind the HTML report's trends).
package struct RunSummary: Sendable, Hashable, Codable {
    /// One job's part of the run.
    package struct JobTime: Sendable, Hashable, Codable {
        package var name: String
        package var status: LedgerStatus
        package var runSeconds: Double
        /// True when the run continued an earlier one that had finished this job.
        package var doneEarlier: Bool

        package init(name: String, status: LedgerStatus, runSeconds: Double, doneEarlier: Bool) {
            self.name = name
            self.status = status
            self.runSeconds = runSeconds
            self.doneEarlier = doneEarlier
        }

        package enum CodingKeys: String, CodingKey {
            case name, status
            case runSeconds = "run_s"
            case doneEarlier = "done_earlier"
        }
    }

    package var id: Int64
    package var startedAt: Date
    package var endedAt: Date?
    /// `ok`, `failed`, `cancelled`, or `running` (still running, or its process died).
    package var status: LedgerStatus
    package var elapsedSeconds: Double?
    package var resumedFrom: Int64?
    package var rows: RowCounts
    package var jobs: [JobTime]

    package init(id: Int64, startedAt: Date, endedAt: Date?, status: LedgerStatus, elapsedSeconds: Double?,
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

    package enum CodingKeys: String, CodingKey {
        case id, status, rows, jobs
        case startedAt = "started_at"
        case endedAt = "ended_at"
        case elapsedSeconds = "elapsed_s"
        case resumedFrom = "resumed_from"
    }

    /// Times as the ledger records them (`DateText`), so `runs --json` prints them as stored.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func date(_ key: CodingKeys) throws -> Date? {
            guard let text = try container.decodeIfPresent(String.self, forKey: key) else { return nil }
            guard let date = DateText.date(text) else {
                throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "not a timestamp: \(text)")
            }
            return date
        }
        self.init(id: try container.decode(Int64.self, forKey: .id), startedAt: try date(.startedAt) ?? Date(timeIntervalSince1970: 0),
                  endedAt: try date(.endedAt), status: try container.decode(LedgerStatus.self, forKey: .status),
                  elapsedSeconds: try container.decodeIfPresent(Double.self, forKey: .elapsedSeconds),
                  resumedFrom: try container.decodeIfPresent(Int64.self, forKey: .resumedFrom),
                  rows: try container.decode(RowCounts.self, forKey: .rows), jobs: try container.decode([JobTime].self, forKey: .jobs))
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(DateText.text(startedAt), forKey: .startedAt)
        try container.encodeIfPresent(endedAt.map(DateText.text), forKey: .endedAt)
        try container.encode(status, forKey: .status)
        try container.encodeIfPresent(elapsedSeconds, forKey: .elapsedSeconds)
        try container.encodeIfPresent(resumedFrom, forKey: .resumedFrom)
        try container.encode(rows, forKey: .rows)
        try container.encode(jobs, forKey: .jobs)
    }
}
