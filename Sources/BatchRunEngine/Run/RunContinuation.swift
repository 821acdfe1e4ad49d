import BatchRunStore
import BatchRunContext
import BatchRunFeeds
import Foundation

/// The run `batchrun run FILE --resume` continues: the latest run of the file on its store, when
/// it did not end `ok`. Found before anything runs, so what stops a resume (the run is still
/// alive, a feed changed) stops it with the store untouched.
///
/// ```swift
/// if let continuation = try RunContinuation.find(for: file, in: store) {
///     try continuation.checkFeeds(of: file)
///     let report = await JobFileRun(file: file, store: store, continuing: continuation).run()
/// }
/// ```
package struct RunContinuation: Sendable {
    /// The run continued.
    package let runID: Int64
    /// The `--param` values it ran with; a resumed run uses them.
    package let params: [String: String]
    let jobs: [String: RunLedger.JobRecord]
    let steps: [String: [Int: RunLedger.StepRecord]]

    /// The latest run of `file` on `store` if it did not end `ok` (cancelled, failed, or its
    /// process died); nil when there is none, or it ended `ok` (a new run starts).
    /// Throws `ResumeError.stillRunning` when its process is alive, unless `evenIfAlive` (a run
    /// fenced by a queue lease: the live process lost the lease and cannot commit).
    package static func find(for file: JobFile, in store: Store, evenIfAlive: Bool = false) throws -> RunContinuation? {
        let ledger = RunLedger(store: store)
        guard let latest = try ledger.latestRun(file: JobFileRun.identity(of: file)), latest.status != .ok
        else { return nil }
        if latest.isAlive && !evenIfAlive { throw ResumeError.stillRunning(run: latest.id, pid: latest.pid, host: latest.host) }
        let jobs = try ledger.jobs(of: latest.id)
        var steps: [String: [Int: RunLedger.StepRecord]] = [:]
        for job in jobs.keys { steps[job] = try ledger.steps(of: latest.id, job: job) }
        return RunContinuation(runID: latest.id, params: latest.params, jobs: jobs, steps: steps)
    }

    /// Throws `ResumeError.feedChanged` when a feed an unfinished insert read from changed
    /// since (its size, modification time, or the hashes of the part read).
    package func checkFeeds(of file: JobFile) throws {
        for job in file.jobs {
            // Only a job that continues from its checkpoints reads on where it stopped.
            guard let record = jobs[job.name], record.status != .ok,
                  record.definition == JobFileRun.definition(of: job, in: file) else { continue }
            for (index, step) in job.steps.enumerated() {
                if case .insert(let insert) = step, case .parts(let pattern, _, _) = insert.source,
                   let progress = steps[job.name]?[index], !progress.done, let parts = progress.parts {
                    try checkParts(parts, of: insert, pattern: pattern, position: progress.position, job: job.name)
                    continue
                }
                guard case .insert(let insert) = step, case .file(let path, _) = insert.source,
                      let progress = steps[job.name]?[index], !progress.done, case .feed(let position)? = progress.position else { continue }
                if let remote = insert.remote {
                    // A remote feed: its identity now (one request) against the checkpoint's.
                    let now: RemoteIdentity
                    do {
                        now = try RemoteFeeds.identity(of: remote, displayPath: displayPath(path))
                    } catch {
                        throw ResumeError.feedChanged(path: path, job: job.name, run: runID, detail: "it cannot be read now: \(error.message)")
                    }
                    guard let then = position.remote, then.isSame(as: now) else {
                        throw ResumeError.feedChanged(path: path, job: job.name, run: runID,
                                                      detail: "it was \(position.remote?.description ?? "a local file"), it is \(now) now")
                    }
                } else if !FeedFingerprint.matches(position, path: path, compressed: insert.compression != .none,
                                                    confinement: insert.confinement) {
                    throw ResumeError.feedChanged(path: path, job: job.name, run: runID, detail: nil)
                }
            }
        }
    }
}

extension RunContinuation {
    /// A feed in parts: every part the run recorded is still as listed (size and modification
    /// time, or ETag), and each part the step stopped in has the fingerprint of its checkpoint.
    private func checkParts(_ parts: [FeedPart], of insert: InsertStep, pattern: String, position: StepPosition?, job: String) throws {
        let change: (part: FeedPart, change: String)?
        do {
            change = try FeedParts.firstChange(in: parts, pattern: pattern, remote: insert.remote, confinement: insert.confinement)
        } catch {
            throw ResumeError.feedChanged(path: pattern, job: job, run: runID, detail: "its parts cannot be listed now: \(error.message)")
        }
        if let change {
            throw ResumeError.feedChanged(path: change.part.name, job: job, run: runID, detail: "a part of \(displayPath(pattern)): \(change.change)")
        }
        guard insert.remote == nil, case .parts(let progress)? = position else { return }
        for open in progress.open where open.part < parts.count {
            let part = parts[open.part]
            if !FeedFingerprint.matches(open.feed, path: part.name, compressed: insert.reading(part: part).compression != .none,
                                        confinement: insert.confinement) {
                throw ResumeError.feedChanged(path: part.name, job: job, run: runID, detail: "a part of \(displayPath(pattern))")
            }
        }
    }
}

/// Why `--resume` refused to continue a run.
package enum ResumeError: BatchRunError {
    case stillRunning(run: Int64, pid: Int32, host: String)
    /// `detail`: what differs, for a remote feed (its identity then and now).
    case feedChanged(path: String, job: String, run: Int64, detail: String?)

    package var code: String {
        switch self {
        case .stillRunning: "run.still-running"
        case .feedChanged: "run.feed-changed"
        }
    }

    package var message: String { description }
    package var isInvalid: Bool { true }

    package var description: String {
        switch self {
        case .stillRunning(let run, let pid, let host):
            return "run \(run) of this file is still running (process \(pid) on \(host)); it cannot be resumed while it runs"
        case .feedChanged(let path, let job, let run, let detail):
            return "\(displayPath(path)) changed since run \(run) read it (job \(job)\(detail.map { "; \($0)" } ?? "")); "
                + "resuming would not be exactly once. Run without --resume to start over"
        }
    }
}
