import Synchronization

/// What the jobs of one run share while they run: published `as:` outputs and step reports.
final class JobRunState: Sendable {
    private let outputs = Mutex<[String: [String: ParamValue]]>([:])
    private let stepReports = Mutex<[String: [StepReport]]>([:])
    private let events = Mutex<(@Sendable (JobFileRun.Event) -> Void)?>(nil)

    var publishedOutputs: [String: [String: ParamValue]] { outputs.withLock { $0 } }

    func publish(_ name: String, _ values: [String: ParamValue]) {
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

    func setEventHandler(_ handler: @escaping @Sendable (JobFileRun.Event) -> Void) {
        events.withLock { $0 = handler }
    }

    func emit(_ event: JobFileRun.Event) {
        events.withLock { $0 }?(event)
    }
}
