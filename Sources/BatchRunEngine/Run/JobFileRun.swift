import BatchRunStore
import BatchRunContext
import BatchRunFeeds
import Foundation
import Synchronization

/// Runs a loaded job file against its store: one `BatchOperation` per job, each job's steps in
/// order, `${NAME.COLUMN}` outputs passed downstream, hooks run as completion blocks, and a
/// `RunReport` at the end. The run is recorded in the store (`_batchrun_*` tables), each step's
/// checkpoint in the transaction of each batch, so a run that did not end `ok` can be continued
/// (`continuing:`, see `RunContinuation`).
///
/// ```swift
/// let file = try JobFileLoader().load(path: "jobs/nightly.yaml")
/// let store = try Store(file.store, model: file.model)
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
        /// A resumed run starts a job over instead of continuing it, and says why.
        case startingOver(job: String, reason: String)
        /// A confined worker's item passed one of its limits (`--max-*`) and was stopped; it ends failed.
        case limitReached(message: String)
    }

    package let file: JobFile
    package let store: Store
    package let scheduler: Scheduler
    /// The run this one continues, if any.
    package let continuation: RunContinuation?
    /// The `--param` values, recorded with the run so a resume uses them again.
    package let params: [String: String]
    /// False: nothing is recorded in the store (no run state, no checkpoints, no history), so
    /// the run cannot be resumed. For a store that must hold only its own tables.
    package let recordsRun: Bool
    /// The schema changes made as the run opened: in its report, and linked to it in `_batchrun_schema`.
    package let schemaChanges: [AppliedSchemaChange]
    private let state: JobRunState
    private let interrupted = Mutex(false)
    /// When the run began and when each job started, for the reports' `started_s`.
    private let clock = Mutex<(run: Date?, jobs: [String: Date])>((nil, [:]))

    public convenience init(file: JobFile, store: Store, maxConcurrent: Int = 1, failFast: Bool = false,
                            mainContext: MainContext? = nil, params: [String: String] = [:]) {
        self.init(file: file, store: store, maxConcurrent: maxConcurrent, failFast: failFast, mainContext: mainContext,
                  continuing: nil, params: params, recordsRun: true)
    }

    /// A run that continues `continuation` (`--resume`), or that records nothing in the store (`recordsRun`).
    package init(file: JobFile, store: Store, maxConcurrent: Int = 1, failFast: Bool = false, mainContext: MainContext? = nil,
                 continuing continuation: RunContinuation?, params: [String: String] = [:], recordsRun: Bool = true,
                 schemaChanges: [AppliedSchemaChange] = []) {
        self.file = file
        self.state = JobRunState(budget: file.limits.map { ItemBudget($0) })
        self.schemaChanges = schemaChanges
        self.recordsRun = recordsRun
        self.store = store
        self.continuation = continuation
        self.params = continuation?.params ?? params
        var operations: [BatchOperation<Void>] = []
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
            operation.unit.finishBlock = { [weak self] outcome in self?.runHooks(job, outcome) }
        }
    }

    /// Cancels the run (Ctrl-C): running jobs stop at their next batch boundary or have their
    /// statement in flight interrupted, the rest never start; the report's status is `cancelled`.
    public func cancel() {
        interrupted.withLock { $0 = true }
        scheduler.cancelAll()
    }

    /// True once `cancel()` was called.
    package var wasCancelled: Bool { interrupted.withLock { $0 } }

    /// Rows each running job has committed (or fetched) so far, for a progress line.
    package func liveProgress() -> [(job: String, rows: Int)] {
        state.live()
    }

    /// How much of its feeds each running job that reads one has read (0...1, bytes of the
    /// feed's size at its last checkpoint), for a progress line.
    package func liveFractions() -> [String: Double] {
        state.liveFractions()
    }

    public func run(onEvent: @escaping @Sendable (Event) -> Void = { _ in }) async -> RunReport {
        state.setEventHandler(onEvent)
        let startedAt = Date()
        let recording = RunRecording(ledger: RunLedger(store: store), file: Self.identity(of: file),
                                     fileHash: Self.contentHash(of: file), params: params, startedAt: startedAt,
                                     continuation: continuation, schemaRecords: schemaChanges.map(\.recordID))
        if recordsRun { state.recording = recording }
        clock.withLock { $0 = (startedAt, [:]) }
        // --max-item-time: the run is stopped as a cancel stops it, and ends failed, saying why.
        let deadline = state.budget.flatMap { budget in budget.limits.seconds.map { seconds in
            Task { [weak self] in
                try await Task.sleep(for: .seconds(seconds))
                _ = budget.timeUp()
                self?.scheduler.cancelAll()
            }
        } }
        let ended = Mutex(0)
        let outcomes = await scheduler.run { [weak self] event in
            guard let self else { return }
            switch event {
            case .started(let name, let index, let total):
                self.clock.withLock { $0.jobs[name] = Date() }
                onEvent(.jobStarted(name: name, index: index, total: total))
            case .finished(let outcome, let index, let total):
                self.state.clearLive(for: outcome.name)
                let last = ended.withLock { ended in
                    ended += 1
                    return ended == total
                }
                if self.recordsRun { self.recordEnd(outcome, last: last, in: recording) }
                let report = self.jobReport(outcome)
                BatchRunMetrics.jobEnded(report)
                onEvent(.jobFinished(report, index: index, total: total))
            }
        }
        deadline?.cancel()
        if let reached = state.budget?.reached { onEvent(.limitReached(message: reached.message)) }
        let jobs = outcomes.map(jobReport)
        // The steps' records, shared rather than copied when one step has them all (the usual
        // case: copying a conflict-heavy import's records cost a twentieth of its run).
        let recordLists = jobs.flatMap { job in job.steps.map(\.conflictRecords) }.filter { !$0.isEmpty }
        var conflicts = ConflictRecords()
        for records in recordLists { conflicts.append(contentsOf: records) }
        var report = RunReport(file: file.runIdentity ?? file.path, store: store.path,
                               status: state.budget?.reached != nil ? .failed : RunReport.status(of: jobs, interrupted: wasCancelled),
                               startedAt: startedAt, elapsedSeconds: Date().timeIntervalSince(startedAt), jobs: jobs,
                               conflicts: conflicts)
        report.part = file.part
        // The run's end, with the ends of jobs that wrote nothing, in one write; the run state
        // is there to resume and for history, so a store locked past its busy timeout now
        // loses this record, not the run.
        let pending = state.takePendingEnds()
        let (status, elapsed) = (report.status, report.elapsedSeconds)
        if recordsRun {
            try? await store.writeRecords { db in
                let id = try recording.runID(in: db)
                for end in pending { try end(db, id) }
                try recording.ledger.finish(run: id, status: status, elapsedSeconds: elapsed, in: db)
            }
            report.runID = recording.runID
        }
        report.resumedFrom = continuation?.runID
        report.schemaChanges = schemaChanges.map { SchemaChangeRecord($0.change) }
        return report
    }

    /// Records how a job that ran in this attempt ended, with its rows over all attempts (the
    /// steps' counts over all attempts; a fetch's from this attempt, since it reads again).
    /// `last`: every other job has ended (their hooks may still be running).
    private func recordEnd(_ outcome: OperationOutcome, last: Bool, in recording: RunRecording) {
        guard state.ran(outcome.name), let job = file.job(named: outcome.name) else { return }
        let report = jobReport(outcome)
        var total = report.rows
        if !job.atomic, !state.startsOver(job.name), let earlier = recording.continuation?.steps[job.name] {
            total += earlier.values.reduce(RowCounts()) { $0 + $1.rows }
            total.fetched = report.rows.fetched   // a fetch reads again when it runs again
        }
        state.setRowsTotal(total, for: job.name)
        let (rows, rowsTotal) = (report.rows, total)
        let names = Set(job.steps.compactMap { step -> String? in if case .fetch(let fetch) = step { return fetch.publishAs } else { return nil } })
        let outputs = state.publishedOutputs.filter { names.contains($0.key) }
        let definition = Self.definition(of: job, in: file), over = state.startsOver(job.name)
        let end: @Sendable (any StoreConnection, Int64) throws -> Void = { db, id in
            _ = try recording.recordJob(job.name, definition: definition, over: over, in: db)
            try recording.ledger.finishJob(run: id, job: job.name, status: outcome.status, runSeconds: outcome.runSeconds,
                                           rows: rows, rowsTotal: rowsTotal, outputs: outputs, error: outcome.error, in: db)
        }
        // With the run's end: a job that wrote nothing needs no write lock now, and the last
        // job's end is the run's end a moment later (one transaction less an item), when
        // nothing can run in between: not when the file has hooks (another job's may still be
        // running, and a job recorded done is what keeps a resumed run from running its hooks
        // again), nor for an atomic job (its transaction recorded it done without its outputs).
        let quietAfter = last && !job.atomic && file.jobs.allSatisfy(\.hooks.isEmpty)
        if (recording.runID == nil && rows == RowCounts(fetched: rows.fetched)) || quietAfter {
            state.addPendingEnd(end)
        } else {
            try? store.writeRecords { db in try end(db, try recording.runID(in: db)) }
        }
    }

    func jobReport(_ outcome: OperationOutcome) -> JobReport {
        let steps = state.reports(for: outcome.name)
        var report = JobReport(name: outcome.name, status: outcome.status, needs: file.job(named: outcome.name)?.needs ?? [],
                               queuedSeconds: outcome.queuedSeconds, runSeconds: outcome.runSeconds,
                               attempts: outcome.status == .skipped || (outcome.status == .cancelled && outcome.runSeconds == 0)
                                   ? 0 : 1 + steps.map(\.retries).reduce(0, +),
                               error: outcome.error, skippedBecause: outcome.skippedBecause, steps: steps,
                               startedSeconds: startedSeconds(of: outcome.name))
        for step in steps {
            report.rows += step.rows
            report.batches += step.batches
            report.conflicts += step.conflicts
            report.reconnects += step.reconnects
        }
        if let earlier = state.doneEarlier(outcome.name) {
            report.resumed = "done earlier"
            report.attempts = 0
            report.rowsTotal = earlier
        } else {
            report.rowsTotal = state.rowsTotal(for: outcome.name) ?? report.rows
        }
        return report
    }

    /// Seconds from the run's start to the job's start; nil for a job that has not started.
    private func startedSeconds(of job: String) -> Double? {
        clock.withLock { clock in
            guard let run = clock.run, let start = clock.jobs[job] else { return nil }
            return start.timeIntervalSince(run)
        }
    }

    /// The body of one job's operation, on its private context: the steps in order, each batch
    /// saved on its own or, for `atomic: true`, all in one transaction. Step reports are recorded
    /// as they finish, and on failure with what was committed.
    private static func execute(_ job: Job, file: JobFile, operation: BatchOperation<Void>, state: JobRunState,
                                context: isolated Context) throws {
        let recording = state.recording
        let definition = Self.definition(of: job, in: file)
        var steps: [Int: RunLedger.StepRecord] = [:]
        switch recording?.start(of: job, definition: definition) {
        case .doneEarlier(let earlier)?:
            for (name, values) in earlier.outputs { state.publish(name, values) }
            state.markDoneEarlier(job.name, rowsTotal: earlier.rowsTotal)
            return
        case .continuing(let earlier)?:
            steps = earlier
        case .over(let reason)?:
            if let reason { state.emit(.startingOver(job: job.name, reason: reason)) }
            state.markStartsOver(job.name)
        case nil:
            break
        }
        state.markRan(job.name)
        let over = state.startsOver(job.name)
        do {
            if job.atomic {
                try context.atomically { context in
                    try runSteps(job, file: file, operation: operation, state: state, steps: [:], context: context)
                    // The job's end is part of its one transaction: done, or not at all.
                    guard let recording else { return }
                    _ = try context.commit(checkpoint: { db, _ in
                        let rows = state.reports(for: job.name).reduce(RowCounts()) { $0 + $1.rows }
                        let id = try recording.recordJob(job.name, definition: definition, over: over, in: db)
                        try recording.ledger.finishJob(run: id, job: job.name, status: .ok, runSeconds: 0, rows: rows,
                                                       rowsTotal: rows, outputs: [:], error: nil, in: db)
                    }) { _, _ in }
                }
            } else {
                try runSteps(job, file: file, operation: operation, state: state, steps: steps, context: context)
            }
        } catch let error as StepError {
            if job.atomic {
                // The one transaction was rolled back: nothing this job wrote is in the store.
                state.replaceReports(for: job.name) { reports in reports.map(\.rolledBack) }
                if error.kind != .cancelled || error.report.rows != RowCounts() { state.record(error.report.rolledBack, for: job.name) }
            } else if error.kind != .cancelled || error.report.rows != RowCounts() {
                state.record(error.report, for: job.name)
            }
            if error.kind == .cancelled { throw CancellationError() }
            throw error
        }
    }

    /// `steps`: what earlier attempts left of each step (done, or where it continues).
    private static func runSteps(_ job: Job, file: JobFile, operation: BatchOperation<Void>, state: JobRunState,
                                 steps: [Int: RunLedger.StepRecord], context: isolated Context) throws {
        let recording = state.recording
        for (index, step) in job.steps.enumerated() {
            if operation.isCancelled { throw StepError.cancelled(report: StepReport(kind: step.kind, entity: step.entity)) }
            let earlier = steps[index]
            if earlier?.done == true, step.kind != .fetch {
                state.record(StepReport(kind: step.kind, entity: step.entity), for: job.name)   // finished in an earlier attempt
                continue
            }
            var environment = StepEnvironment(
                job: job.name, entity: file.model[step.entity]!,
                params: resolvedParams(step, file: file, outputs: state.publishedOutputs),
                batchSize: job.batchSize(for: step), mergePolicy: job.mergePolicy,
                isCancelled: { operation.isCancelled }, budget: state.budget,
                progress: { rows in
                    state.setLive(rows, step: index, for: job.name)
                    state.emit(.progress(job: job.name, step: index, rows: rows))
                })
            environment.retries = job.retries
            // An atomic job's one transaction is lost with its connection: nothing to carry on.
            environment.reconnect = job.atomic ? 0 : context.store.reconnectWindow
            environment.onRetry = { reason in state.emit(.retrying(job: job.name, reason: reason)) }
            environment.expecting = { rows in state.setLiveEstimate(rows, step: index, for: job.name) }
            if !job.atomic, let recording {
                environment.resumeAt = earlier?.position
                environment.parts = earlier?.parts
                let definition = Self.definition(of: job, in: file), over = state.startsOver(job.name)
                var checkpoint = StepCheckpoint { db, position, rows in
                    let id = try recording.recordJob(job.name, definition: definition, over: over, in: db)
                    try recording.ledger.saveCheckpoint(run: id, job: job.name, step: index, position: position, rows: rows, in: db)
                    switch position {
                    case .feed(let feed): state.setLiveFeed(read: feed.offset, size: feed.feedSize, step: index, for: job.name)
                    case .parts(let parts):
                        state.setLiveFeed(read: parts.bytesRead, size: parts.bytesTotal, step: index, for: job.name)
                    default: break
                    }
                }
                checkpoint.recordParts = { db, parts in
                    let id = try recording.recordJob(job.name, definition: definition, over: over, in: db)
                    try recording.ledger.recordParts(run: id, job: job.name, step: index, parts: parts, in: db)
                }
                // Read after a lost connection, so that a batch that committed is not applied twice.
                checkpoint.stored = { [name = job.name] in
                    try recording.storedStep(job: name, step: index).map { ($0.position, $0.rows) }
                }
                checkpoint.earlierRows = over ? RowCounts() : earlier?.rows ?? RowCounts()
                environment.checkpoint = checkpoint
            }
            let report: StepReport
            switch step {
            case .fetch(let fetch):
                let (fetched, values) = try FetchRunner.run(fetch, in: environment, context: context)
                report = fetched
                if let name = fetch.publishAs, let values { state.publish(name, values) }
            case .insert(let insert):
                report = try InsertRunner.run(insert, in: environment, context: context)
            case .delete(let delete):
                report = try DeleteRunner.run(delete, in: environment, context: context)
            case .batchUpdate(let update):
                report = try BatchUpdateRunner.run(update, in: environment, context: context)
            }
            state.record(report, for: job.name)
            // Not once the job is cancelled: a step that returned as the cancel came may have
            // stopped short of its end (a reader that took the cancel for the feed's end did, and
            // its resumed run skipped the rows); without the mark it goes on from its checkpoint.
            if !job.atomic, step.kind != .fetch, !operation.isCancelled, let recording {
                // Best effort: a step whose done mark is lost continues after its last checkpoint and finds nothing left.
                let definition = Self.definition(of: job, in: file), over = state.startsOver(job.name)
                try? context.store.writeRecords { db in
                    let id = try recording.recordJob(job.name, definition: definition, over: over, in: db)
                    try recording.ledger.finishStep(run: id, job: job.name, step: index, rows: report.rows, in: db)
                }
            }
        }
    }

    /// The file's params with the step's params resolved over them.
    package static func resolvedParams(_ step: Step, file: JobFile, outputs: [String: [String: StoreValue]]) -> [String: StoreValue] {
        var params = file.params
        for (name, template) in step.params {
            params[name] = template.resolve { reference in
                switch reference {
                case .output(let name, let column): return outputs[name]?[column] ?? .null
                case .environment(let name): return file.environment[name].map(StoreValue.text)
                case .parameter(let name): return file.params[name]
                }
            } ?? .null
        }
        return params
    }

    private func runHooks(_ job: Job, _ outcome: OperationOutcome) {
        if state.doneEarlier(job.name) != nil { return }   // hooks run for jobs that run in this attempt
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
            if case .failed(let message) = ShellHook.run(command, environment: environment, base: file.hookEnvironment) {
                state.emit(.hookFailed(job: job.name, hook: name, message: message))
            }
        }
    }
}
