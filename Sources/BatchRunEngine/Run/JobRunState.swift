import BatchRunStore
import BatchRunFeeds
import Synchronization

/// What the jobs of one run share while they run: published `as:` outputs and step reports.
final class JobRunState: Sendable {
    /// What a confined worker lets the run take (`--max-*`); nil: no limits.
    let budget: ItemBudget?

    init(budget: ItemBudget? = nil) {
        self.budget = budget
    }

    private let outputs = Mutex<[String: [String: StoreValue]]>([:])
    private let stepReports = Mutex<[String: [StepReport]]>([:])
    private let events = Mutex<Callback<@Sendable (JobFileRun.Event) -> Void>?>(nil)
    /// Rows per running job: the steps done plus the running step's totals so far.
    private let liveRows = Mutex<[String: [Int: Int]]>([:])
    /// Bytes read and size of each running step's feed, by job and step (at its last checkpoint).
    private let liveFeeds = Mutex<[String: [Int: (read: Int64, size: Int64)]]>([:])
    /// Rows each running batch-update step expects to change (its estimate), by job and step.
    private let liveEstimates = Mutex<[String: [Int: Int]]>([:])
    private let recordingState = Mutex<RunRecording?>(nil)
    /// Per job of this attempt: rows over all attempts, once known; and the jobs done earlier.
    private let jobs = Mutex<(ran: Set<String>, doneEarlier: [String: RowCounts], rowsTotal: [String: RowCounts])>(([], [:], [:]))

    var recording: RunRecording? {
        get { recordingState.withLock { $0 } }
        set { recordingState.withLock { $0 = newValue } }
    }

    private let pendingEnds = Mutex<[@Sendable (any StoreConnection, Int64) throws -> Void]>([])
    private let over = Mutex<Set<String>>([])

    func markRan(_ job: String) { jobs.withLock { _ = $0.ran.insert(job) } }
    func markStartsOver(_ job: String) { over.withLock { _ = $0.insert(job) } }
    func startsOver(_ job: String) -> Bool { over.withLock { $0.contains(job) } }
    func addPendingEnd(_ end: @escaping @Sendable (any StoreConnection, Int64) throws -> Void) { pendingEnds.withLock { $0.append(end) } }
    func takePendingEnds() -> [@Sendable (any StoreConnection, Int64) throws -> Void] {
        pendingEnds.withLock { ends in defer { ends = [] }; return ends }
    }
    package func ran(_ job: String) -> Bool { jobs.withLock { $0.ran.contains(job) } }
    func markDoneEarlier(_ job: String, rowsTotal: RowCounts) { jobs.withLock { $0.doneEarlier[job] = rowsTotal } }
    package func doneEarlier(_ job: String) -> RowCounts? { jobs.withLock { $0.doneEarlier[job] } }
    func setRowsTotal(_ rows: RowCounts, for job: String) { jobs.withLock { $0.rowsTotal[job] = rows } }
    package func rowsTotal(for job: String) -> RowCounts? { jobs.withLock { $0.rowsTotal[job] } }

    var publishedOutputs: [String: [String: StoreValue]] { outputs.withLock { $0 } }

    package func publish(_ name: String, _ values: [String: StoreValue]) {
        outputs.withLock { $0[name] = values }
    }

    package func record(_ report: StepReport, for job: String) {
        stepReports.withLock { $0[job, default: []].append(report) }
    }

    package func reports(for job: String) -> [StepReport] {
        stepReports.withLock { $0[job] } ?? []
    }

    /// Replaces a job's step reports, for an atomic job whose transaction was rolled back.
    func replaceReports(for job: String, _ transform: ([StepReport]) -> [StepReport]) {
        stepReports.withLock { $0[job] = transform($0[job] ?? []) }
    }

    func setLive(_ rows: RowCounts, step: Int, for job: String) {
        let total = rows.fetched + rows.inserted + rows.updated + rows.deleted
        liveRows.withLock { $0[job, default: [:]][step] = total }
    }

    func clearLive(for job: String) {
        _ = liveRows.withLock { $0.removeValue(forKey: job) }
        _ = liveFeeds.withLock { $0.removeValue(forKey: job) }
        _ = liveEstimates.withLock { $0.removeValue(forKey: job) }
    }

    /// A batch-update step's estimate of the rows it changes.
    func setLiveEstimate(_ rows: Int, step: Int, for job: String) {
        liveEstimates.withLock { $0[job, default: [:]][step] = rows }
    }

    /// A step's feed position at its checkpoint: `read` bytes of `size`.
    func setLiveFeed(read: Int64, size: Int64, step: Int, for job: String) {
        liveFeeds.withLock { $0[job, default: [:]][step] = (read, size) }
    }

    /// How far each running job is (0...1), for jobs whose step says how much is to come: its
    /// feeds' bytes read of their size, or, when its latest such step is a batch-update, that
    /// step's rows so far of its estimate.
    package func liveFractions() -> [String: Double] {
        var fractions = liveFeeds.withLock { feeds in
            feeds.compactMapValues { steps in
                let (read, size) = steps.values.reduce((Int64(0), Int64(0))) { ($0.0 + $1.read, $0.1 + $1.size) }
                return size > 0 ? min(1, Double(read) / Double(size)) : nil
            }
        }
        let estimates = liveEstimates.withLock { $0 }
        guard !estimates.isEmpty else { return fractions }
        let feedSteps = liveFeeds.withLock { $0.mapValues { $0.keys.max() ?? -1 } }
        let rows = liveRows.withLock { $0 }
        for (job, steps) in estimates {
            guard let latest = steps.max(by: { $0.key < $1.key }), latest.key > feedSteps[job] ?? -1, latest.value > 0 else { continue }
            fractions[job] = min(1, Double(rows[job]?[latest.key] ?? 0) / Double(latest.value))
        }
        return fractions
    }

    package func live() -> [(job: String, rows: Int)] {
        liveRows.withLock { live in live.map { ($0.key, $0.value.values.reduce(0, +)) }.sorted { $0.job < $1.job } }
    }

    func setEventHandler(_ handler: @escaping @Sendable (JobFileRun.Event) -> Void) {
        events.withLock { $0 = Callback(handler) }
    }

    package func emit(_ event: JobFileRun.Event) {
        events.withLock { $0 }?.function(event)
    }
}
