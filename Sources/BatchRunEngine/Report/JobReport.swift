import BatchRunStore

/// Timing, counts and outcome of one job, as in the JSON report's `jobs` array.
public struct JobReport: Sendable, Hashable, Codable {
    public var name: String
    public var status: JobStatus
    package var needs: [String]
    package var queuedSeconds: Double
    /// Seconds from the run's start to this job's start; nil for a job that never started
    /// (and in reports written before this key existed).
    package var startedSeconds: Double?
    public var runSeconds: Double
    package var attempts: Int
    public var error: String?
    package var skippedBecause: String?
    public var rows: RowCounts
    package var batches: BatchCounts
    package var steps: [StepReport]
    public var conflicts: Int
    /// Rows over every attempt of a resumed run (`rows` counts this attempt).
    package var rowsTotal = RowCounts()
    /// For a job of a resumed run that was not run again: `done earlier`. Written only when set.
    package var resumed: String?
    /// Times the connection to the server was lost and made again while the job ran (a
    /// PostgreSQL restart, a failover, a terminated session), each batch carried on from a
    /// fresh read. Always written; a report from before this key reads as 0.
    package var reconnects: Int {
        get { reconnectCount ?? 0 }
        set { reconnectCount = newValue }
    }
    /// 0 unless set; nil only in a report decoded from before the key existed.
    private var reconnectCount: Int? = 0

    package init(name: String, status: JobStatus, needs: [String] = [], queuedSeconds: Double = 0,
                runSeconds: Double = 0, attempts: Int = 0, error: String? = nil, skippedBecause: String? = nil,
                rows: RowCounts = RowCounts(), batches: BatchCounts = BatchCounts(), steps: [StepReport] = [],
                conflicts: Int = 0, startedSeconds: Double? = nil, resumed: String? = nil) {
        self.name = name
        self.status = status
        self.needs = needs
        self.queuedSeconds = queuedSeconds
        self.runSeconds = runSeconds
        self.attempts = attempts
        self.error = error
        self.skippedBecause = skippedBecause
        self.rows = rows
        self.batches = batches
        self.steps = steps
        self.conflicts = conflicts
        self.startedSeconds = startedSeconds
        self.resumed = resumed
    }

    package enum CodingKeys: String, CodingKey {
        case name, status, needs, attempts, error, rows, batches, steps, conflicts, resumed
        case reconnectCount = "reconnects"
        case rowsTotal = "rows_total"
        case queuedSeconds = "queued_s"
        case startedSeconds = "started_s"
        case runSeconds = "run_s"
        case skippedBecause = "skipped_because"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(status, forKey: .status)
        try container.encode(needs, forKey: .needs)
        try container.encode(queuedSeconds, forKey: .queuedSeconds)
        try container.encode(startedSeconds, forKey: .startedSeconds)   // null for a job that never started
        try container.encode(runSeconds, forKey: .runSeconds)
        try container.encode(attempts, forKey: .attempts)
        try container.encode(error, forKey: .error)              // null when there is none
        try container.encode(skippedBecause, forKey: .skippedBecause)
        try container.encode(rows, forKey: .rows)
        try container.encode(rowsTotal, forKey: .rowsTotal)
        try container.encodeIfPresent(resumed, forKey: .resumed)
        try container.encode(batches, forKey: .batches)
        try container.encode(steps, forKey: .steps)
        try container.encode(conflicts, forKey: .conflicts)
        try container.encode(reconnects, forKey: .reconnectCount)
    }
}
