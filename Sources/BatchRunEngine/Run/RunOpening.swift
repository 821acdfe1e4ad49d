import BatchRunStore
import BatchRunContext
import Foundation

/// A job file's run, opened and ready to start: its store (fenced by a queue claim when the
/// store is the queue's database), the run it continues (`resume`), and the file as that run
/// had it (reloaded with the params it ran with). What `batchrun run` does before a run starts,
/// for library code in one call.
///
/// ```swift
/// let file = try JobFileLoader().load(path: "jobs/nightly.yaml")
/// let opened = try RunOpening.open(file, resume: true)
/// let report = await opened.makeRun(maxConcurrent: 4).run()
/// ```
public struct RunOpening: Sendable {
    /// The job file to run: the one given, or as reloaded with the params of the run it continues.
    public let file: JobFile
    public let store: Store
    /// The run this one continues (`resume`), if any.
    package let continuation: RunContinuation?
    /// True when the store's writes are fenced by a queue claim.
    package let fenced: Bool
    /// The schema changes made as the run opened (JOBFILE.md section 13), in `_batchrun_schema`.
    package var schemaChanges: [AppliedSchemaChange] = []

    /// Opens `file`'s store and, with `resume`, finds the run to continue (a fenced run may
    /// continue one whose process still lives: that process lost the claim and cannot commit).
    /// When that run had other params than `params`, `reload` is called with its params and
    /// the file it returns is run (its errors are thrown as they are). Then the store's tables
    /// are made to hold the file's entities (JOBFILE.md section 13); `allowingSchemaChanges`
    /// false (or the file's `schema_changes: refuse`) makes a needed change an error.
    /// Throws `RunOpeningError`.
    public static func open(_ file: JobFile, resume: Bool = false, params: [String: String] = [:], allowingSchemaChanges: Bool = true,
                            reload: (_ params: [String: String]) throws -> JobFile = { _ in throw RunOpeningError.cannotReload }) throws -> RunOpening {
        try open(file, resume: resume, fence: nil, params: params, allowingSchemaChanges: allowingSchemaChanges, reload: reload)
    }

    /// `open`, the store's writes fenced by a queue claim when the store is the queue's database.
    package static func open(_ file: JobFile, resume: Bool = false, fence: (any RunFence)?, params: [String: String] = [:],
                             allowingSchemaChanges: Bool = true,
                             reload: (_ params: [String: String]) throws -> JobFile = { _ in throw RunOpeningError.cannotReload }) throws -> RunOpening {
        // The store is opened without changing its schema: a run that cannot be continued leaves it untouched.
        let store: Store
        var fenced = false
        do {
            if let fence, let writeFence = fence.writeFence(for: file.store) {
                var spec = file.store
                spec.idleTimeout = fence.idleTimeout
                store = try Store(spec, model: file.model, fence: writeFence, migrating: false)
                fenced = true
            } else {
                store = try Store(file.store, model: file.model, fence: nil, migrating: false)
            }
        } catch {
            throw RunOpeningError.store(error)
        }
        var opened = try continued(file, in: store, fenced: fenced, resume: resume, params: params, reload: reload)
        do {
            let options = SchemaChangeOptions(allowed: allowingSchemaChanges && !opened.file.refusesSchemaChanges,
                                              file: JobFileRun.identity(of: opened.file))
            opened.schemaChanges = try store.migrate(options)
        } catch let refusals as SchemaRefusals {
            throw RunOpeningError.store(refusals.located(in: opened.file))
        } catch {
            throw RunOpeningError.store(error)
        }
        return opened
    }

    /// The run `file` continues on `store` (with `resume`), its file reloaded with that run's params.
    private static func continued(_ file: JobFile, in store: Store, fenced: Bool, resume: Bool, params: [String: String],
                                  reload: (_ params: [String: String]) throws -> JobFile) throws -> RunOpening {
        guard resume else { return RunOpening(file: file, store: store, continuation: nil, fenced: fenced) }
        var file = file
        let continuation: RunContinuation?
        do {
            continuation = try RunContinuation.find(for: file, in: store, evenIfAlive: fenced)
        } catch {
            throw RunOpeningError.resume(error)
        }
        // A resumed run runs with the params of the run it continues.
        if let theirs = continuation?.params, theirs != params { file = try reload(theirs) }
        do {
            try continuation?.checkFeeds(of: file)
        } catch {
            throw RunOpeningError.resume(error)
        }
        return RunOpening(file: file, store: store, continuation: continuation, fenced: fenced)
    }

    /// The run, ready to start (`run(onEvent:)`); `params` are recorded with it (a continued
    /// run records those of the run it continues).
    public func makeRun(maxConcurrent: Int = 1, failFast: Bool = false, params: [String: String] = [:]) -> JobFileRun {
        JobFileRun(file: file, store: store, maxConcurrent: maxConcurrent, failFast: failFast, continuing: continuation, params: params,
                   schemaChanges: schemaChanges)
    }
}

/// Why a run could not be opened: nothing was run.
public enum RunOpeningError: BatchRunError {
    /// The store could not be opened (locked, full, read-only, not a database, unreachable) or
    /// its tables cannot be made to hold the job file's entities (`isInvalid`; a `JobFileError`
    /// at the columns when a schema change was refused).
    case store(any Error)
    /// The run to continue cannot be (still running, a feed changed).
    case resume(any Error)
    /// The run to continue had other params, and no way to reload the file was given.
    case cannotReload

    /// True when the job file is what is wrong for this store (exit status 2), not the store.
    public var isInvalid: Bool {
        switch self {
        case .store(let error): (error as? any BatchRunError)?.isInvalid ?? false
        case .resume, .cannotReload: true
        }
    }

    /// The code of the error underneath: `store.cannot-open`, `run.still-running`.
    package var code: String {
        switch self {
        case .store(let error): (error as? any BatchRunError)?.code ?? "store.cannot-open"
        case .resume(let error): (error as? any BatchRunError)?.code ?? "run.cannot-resume"
        case .cannotReload: "run.cannot-reload"
        }
    }

    package var message: String { description }

    /// True when the description says where in the job file each error is (`FILE:LINE:COLUMN: error: ...`).
    package var isLocated: Bool {
        if case .store(let error) = self { return error is JobFileError }
        return false
    }

    public var description: String {
        switch self {
        case .store(let error as JobFileError):
            error.rendered + "\nthe store's schema was not changed"
        case .store(let error), .resume(let error): "\(error)"
        case .cannotReload: "the run to continue had other params, and the job file was not reloaded with them"
        }
    }
}
