import Synchronization

/// What the jobs of one run share while they run: published `as:` outputs and step reports.
final class JobRunState: Sendable {
    private let outputs = Mutex<[String: [String: StoreValue]]>([:])
    private let stepReports = Mutex<[String: [StepReport]]>([:])
    private let events = Mutex<(@Sendable (JobFileRun.Event) -> Void)?>(nil)
    /// Rows per running job: the steps done plus the running step's totals so far.
    private let liveRows = Mutex<[String: [Int: Int]]>([:])

    var publishedOutputs: [String: [String: StoreValue]] { outputs.withLock { $0 } }

    func publish(_ name: String, _ values: [String: StoreValue]) {
        outputs.withLock { $0[name] = values }
    }

    func record(_ report: StepReport, for job: String) {
        stepReports.withLock { $0[job, default: []].append(report) }
    }

    func reports(for job: String) -> [StepReport] {
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
    }

    func live() -> [(job: String, rows: Int)] {
        liveRows.withLock { live in live.map { ($0.key, $0.value.values.reduce(0, +)) }.sorted { $0.job < $1.job } }
    }

    func setEventHandler(_ handler: @escaping @Sendable (JobFileRun.Event) -> Void) {
        events.withLock { $0 = handler }
    }

    func emit(_ event: JobFileRun.Event) {
        events.withLock { $0 }?(event)
    }
}
