import BatchRunStore
import BatchRunFeeds

/// A loaded and validated job file: the store, the model, defaults, params and jobs.
///
/// ```swift
/// let file = try JobFileLoader().load(path: "jobs/nightly.yaml")
/// print(file.jobs.map(\.name))   // ["import_sessions", "close_stale", ...]
/// ```
public struct JobFile: Sendable {
    /// The path as given on the command line.
    package var path: String
    /// What the run history knows the file by, when it is not its path: a PostgreSQL queue
    /// item's `postgresql://HOST:PORT/DB#ID` (its text is in the queue, in no file).
    package var runIdentity: String?
    /// The file's folder; relative paths inside the file are resolved against it.
    package var directory: String
    package var version: Int
    public var store: StoreSpec
    public var model: Model
    package var defaults: JobDefaults
    /// The file's params with `--param` overrides applied.
    package var params: [String: StoreValue]
    /// Jobs in the order they were written.
    public var jobs: [Job]
    /// The file's text, for showing errors found later (at run time) with their lines.
    package var source: String
    /// The environment `${env.VAR}` was checked against and is read from at run time (the
    /// loader's, by default the process's).
    package var environment: [String: String]
    /// What the file's shell hooks start with besides their `BATCHRUN_*` variables; nil: the
    /// process's environment. A confined worker's items get only the variables it allows.
    package var hookEnvironment: [String: String]?
    /// A confined worker's limits on the run (`--max-item-time`, `--max-rows`, `--max-bytes`); nil: none.
    package var limits: ItemLimits?
    /// Why the expressions were not checked, when they were not: a PostgreSQL store's server
    /// could not be reached (everything else was checked). Nil when they were.
    package var expressionsUnchecked: String?
    /// `schema_changes: refuse`: a store whose tables lack what the file declares is exit 2,
    /// never changed (JOBFILE.md section 13).
    package var refusesSchemaChanges = false
    /// Where each entity (`Entity`) and column (`Entity.column`) is declared, for errors found
    /// against the store (a schema change refused).
    package var declarations: [String: SourceLocation] = [:]
    /// A fan-out part's item: the part its job reads (a path or `s3://BUCKET/KEY`), named in its report.
    package var part: String?

    package func job(named name: String) -> Job? {
        jobs.first { $0.name == name }
    }
}

/// `defaults:` applied to every job that does not set its own.
package struct JobDefaults: Sendable, Hashable {
    package var batchSize = 1000
    package var mergePolicy = MergePolicy.error
    package var timeout: Double?
    package var retries = 0

    package init(batchSize: Int = 1000, mergePolicy: MergePolicy = .error, timeout: Double? = nil, retries: Int = 0) {
        self.batchSize = batchSize
        self.mergePolicy = mergePolicy
        self.timeout = timeout
        self.retries = retries
    }
}

/// Shell commands run after a job ends (`/bin/sh -c`).
package struct Hooks: Sendable, Hashable {
    package var onSuccess: String?
    package var onFailure: String?
    package var onComplete: String?

    package var isEmpty: Bool { onSuccess == nil && onFailure == nil && onComplete == nil }

    package init(onSuccess: String? = nil, onFailure: String? = nil, onComplete: String? = nil) {
        self.onSuccess = onSuccess
        self.onFailure = onFailure
        self.onComplete = onComplete
    }
}

/// One job: steps run in order in its own context, after the jobs it needs succeeded.
public struct Job: Sendable, Hashable {
    public var name: String
    public var needs: [String]
    package var steps: [Step]
    package var mergePolicy: MergePolicy
    package var batchSize: Int
    package var atomic: Bool
    /// Seconds; nil means no limit.
    package var timeout: Double?
    package var retries: Int
    package var hooks: Hooks
    package var description: String?
    package var location: SourceLocation

    /// The batch size for a step: the step's own, else the job's (which includes the defaults).
    package func batchSize(for step: Step) -> Int {
        step.batchSize ?? batchSize
    }

    package init(name: String, needs: [String], steps: [Step], mergePolicy: MergePolicy, batchSize: Int, atomic: Bool, timeout: Double? = nil, retries: Int, hooks: Hooks, description: String? = nil, location: SourceLocation) {
        self.name = name
        self.needs = needs
        self.steps = steps
        self.mergePolicy = mergePolicy
        self.batchSize = batchSize
        self.atomic = atomic
        self.timeout = timeout
        self.retries = retries
        self.hooks = hooks
        self.description = description
        self.location = location
    }
}
