import Foundation
import GRDB
import Synchronization

/// Runs a loaded job file against its store: one `BatchOperation` per job, each job's steps in
/// order, `${NAME.COLUMN}` outputs passed downstream, hooks run as completion blocks, and a
/// `RunReport` at the end.
///
/// ```swift
/// let file = try JobFileLoader().load(path: "jobs/nightly.yaml")
/// let store = try Store(path: file.store.path, model: file.model, busyTimeout: file.store.busyTimeout)
/// let report = await JobFileRun(file: file, store: store).run()
/// print(report.status)
/// ```
public final class JobFileRun: Sendable {
    public enum Event: Sendable {
        case jobStarted(name: String, index: Int, total: Int)
        case jobFinished(JobReport, index: Int, total: Int)
        case hookFailed(job: String, hook: String, message: String)
        /// A step of a running job committed a batch (or, for a fetch, read one); `rows` are
        /// the step's totals so far. Sent on the job's thread before its next batch starts.
        case progress(job: String, step: Int, rows: RowCounts)
        /// A batch of a running job failed on a busy store or a conflict under `error` and is
        /// tried again from a fresh read (`retries`).
        case retrying(job: String, reason: String)
    }

    public let file: JobFile
    public let store: Store
    public let scheduler: Scheduler
    private let state = JobRunState()
    private let interrupted = Mutex(false)

    public init(file: JobFile, store: Store, maxConcurrent: Int = 1, failFast: Bool = false, mainContext: MainContext? = nil) {
        self.file = file
        self.store = store
        var operations: [BatchOperation] = []
        for job in file.jobs {
            let operation = BatchOperation(name: job.name, needs: job.needs, store: store, mergePolicy: job.mergePolicy) {
                [state] operation, context in
                try Self.execute(job, file: file, operation: operation, state: state, context: context)
            }
            operations.append(operation)
        }
        scheduler = Scheduler(operations: operations, maxConcurrent: maxConcurrent, failFast: failFast,
                              timeouts: Dictionary(uniqueKeysWithValues: file.jobs.compactMap { job in job.timeout.map { (job.name, $0) } }),
                              mainContext: mainContext)
        for (job, operation) in zip(file.jobs, operations) where !job.hooks.isEmpty {
            operation.finishBlock = { [weak self] outcome in self?.runHooks(job, outcome) }
        }
    }

    /// Cancels the run (Ctrl-C): running jobs stop at their next batch boundary or have their
    /// statement in flight interrupted, the rest never start; the report's status is `cancelled`.
    public func cancel() {
        interrupted.withLock { $0 = true }
        scheduler.cancelAll()
    }

    /// True once `cancel()` was called.
    public var wasCancelled: Bool { interrupted.withLock { $0 } }

    /// Rows each running job has committed (or fetched) so far, for a progress line.
    public func liveProgress() -> [(job: String, rows: Int)] {
        state.live()
    }

    public func run(onEvent: @escaping @Sendable (Event) -> Void = { _ in }) async -> RunReport {
        state.setEventHandler(onEvent)
        let startedAt = Date()
        let outcomes = await scheduler.run { [weak self] event in
            guard let self else { return }
            switch event {
            case .started(let name, let index, let total):
                onEvent(.jobStarted(name: name, index: index, total: total))
            case .finished(let outcome, let index, let total):
                self.state.clearLive(for: outcome.name)
                onEvent(.jobFinished(self.jobReport(outcome), index: index, total: total))
            }
        }
        let jobs = outcomes.map(jobReport)
        let conflicts = jobs.flatMap { job in job.steps.flatMap(\.conflictRecords) }
        return RunReport(file: file.path, store: store.path,
                         status: RunReport.status(of: jobs, interrupted: wasCancelled),
                         startedAt: startedAt, elapsedSeconds: Date().timeIntervalSince(startedAt), jobs: jobs,
                         conflicts: conflicts)
    }

    func jobReport(_ outcome: OperationOutcome) -> JobReport {
        let steps = state.reports(for: outcome.name)
        var report = JobReport(name: outcome.name, status: outcome.status, needs: file.job(named: outcome.name)?.needs ?? [],
                               queuedSeconds: outcome.queuedSeconds, runSeconds: outcome.runSeconds,
                               attempts: outcome.status == .skipped || (outcome.status == .cancelled && outcome.runSeconds == 0)
                                   ? 0 : 1 + steps.map(\.retries).reduce(0, +),
                               error: outcome.error, skippedBecause: outcome.skippedBecause, steps: steps)
        for step in steps {
            report.rows += step.rows
            report.batches += step.batches
            report.conflicts += step.conflicts
        }
        return report
    }

    /// The body of one job's operation, on its private context: the steps in order, each batch
    /// saved on its own or, for `atomic: true`, all in one transaction. Step reports are recorded
    /// as they finish, and on failure with what was committed.
    private static func execute(_ job: Job, file: JobFile, operation: BatchOperation, state: JobRunState,
                                context: isolated Context) throws {
        do {
            if job.atomic {
                try context.atomically { context in try runSteps(job, file: file, operation: operation, state: state, context: context) }
            } else {
                try runSteps(job, file: file, operation: operation, state: state, context: context)
            }
        } catch let error as StepError {
            if job.atomic {
                // The one transaction was rolled back: nothing this job wrote is in the store.
                state.replaceReports(for: job.name) { reports in reports.map(\.rolledBack) }
                if !error.cancelled || error.report.rows != RowCounts() { state.record(error.report.rolledBack, for: job.name) }
            } else if !error.cancelled || error.report.rows != RowCounts() {
                state.record(error.report, for: job.name)
            }
            if error.cancelled { throw CancellationError() }
            throw error
        }
    }

    private static func runSteps(_ job: Job, file: JobFile, operation: BatchOperation, state: JobRunState,
                                 context: isolated Context) throws {
        for (index, step) in job.steps.enumerated() {
            if operation.isCancelled { throw StepError("cancelled", report: StepReport(kind: step.kind, entity: step.entity), cancelled: true) }
            var environment = StepEnvironment(
                job: job.name, entity: file.model[step.entity]!,
                params: resolvedParams(step, file: file, outputs: state.publishedOutputs),
                batchSize: job.batchSize(for: step), mergePolicy: job.mergePolicy,
                isCancelled: { operation.isCancelled },
                progress: { rows in
                    state.setLive(rows, step: index, for: job.name)
                    state.emit(.progress(job: job.name, step: index, rows: rows))
                })
            environment.retries = job.retries
            environment.onRetry = { reason in state.emit(.retrying(job: job.name, reason: reason)) }
            switch step {
            case .fetch(let fetch):
                let (report, values) = try FetchRunner.run(fetch, in: environment, context: context)
                state.record(report, for: job.name)
                if let name = fetch.publishAs, let values { state.publish(name, values) }
            case .insert(let insert):
                state.record(try InsertRunner.run(insert, in: environment, context: context), for: job.name)
            case .delete(let delete):
                state.record(try DeleteRunner.run(delete, in: environment, context: context), for: job.name)
            case .batchUpdate(let update):
                state.record(try BatchUpdateRunner.run(update, in: environment, context: context), for: job.name)
            }
        }
    }

    /// The file's params with the step's params resolved over them.
    static func resolvedParams(_ step: Step, file: JobFile, outputs: [String: [String: StoreValue]]) -> [String: StoreValue] {
        var params = file.params
        for (name, template) in step.params {
            params[name] = template.resolve { reference in
                switch reference {
                case .output(let name, let column): return outputs[name]?[column] ?? .null
                case .environment(let name): return ProcessInfo.processInfo.environment[name].map(StoreValue.text)
                case .parameter(let name): return file.params[name]
                }
            } ?? .null
        }
        return params
    }

    private func runHooks(_ job: Job, _ outcome: OperationOutcome) {
        let report = jobReport(outcome)
        let environment = [
            "BATCHRUN_JOB": job.name,
            "BATCHRUN_STATUS": outcome.status.rawValue,
            "BATCHRUN_STORE": store.path,
            "BATCHRUN_RUN_SECONDS": String(format: "%.3f", outcome.runSeconds),
            "BATCHRUN_ROWS_INSERTED": String(report.rows.inserted),
            "BATCHRUN_ROWS_UPDATED": String(report.rows.updated),
            "BATCHRUN_ROWS_DELETED": String(report.rows.deleted),
            "BATCHRUN_ROWS_FETCHED": String(report.rows.fetched),
            "BATCHRUN_CONFLICTS": String(report.conflicts),
        ]
        var hooks: [(String, String)] = []
        if outcome.status == .ok, let command = job.hooks.onSuccess { hooks.append(("on_success", command)) }
        if [.failed, .timedOut, .cancelled].contains(outcome.status), let command = job.hooks.onFailure {
            hooks.append(("on_failure", command))
        }
        if let command = job.hooks.onComplete { hooks.append(("on_complete", command)) }
        for (name, command) in hooks {
            if case .failed(let message) = ShellHook.run(command, environment: environment) {
                state.emit(.hookFailed(job: job.name, hook: name, message: message))
            }
        }
    }
}
