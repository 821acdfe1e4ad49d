/// A loaded and validated job file: the store, the model, defaults, params and jobs.
///
/// ```swift
/// let file = try JobFileLoader().load(path: "jobs/nightly.yaml")
/// print(file.jobs.map(\.name))   // ["import_sessions", "close_stale", ...]
/// ```
public struct JobFile: Sendable {
    /// The path as given on the command line.
    public var path: String
    /// The file's folder; relative paths inside the file are resolved against it.
    public var directory: String
    public var version: Int
    public var store: StoreSpec
    public var model: Model
    public var defaults: JobDefaults
    /// The file's params with `--param` overrides applied.
    public var params: [String: StoreValue]
    /// Jobs in the order they were written.
    public var jobs: [Job]
    /// The file's text, for showing errors found later (at run time) with their lines.
    public var source: String
    /// The environment `${env.VAR}` was checked against and is read from at run time (the
    /// loader's, by default the process's).
    public var environment: [String: String]
    /// Why the expressions were not checked, when they were not: a PostgreSQL store's server
    /// could not be reached (everything else was checked). Nil when they were.
    public var expressionsUnchecked: String?

    public func job(named name: String) -> Job? {
        jobs.first { $0.name == name }
    }
}

/// `defaults:` applied to every job that does not set its own.
public struct JobDefaults: Sendable, Hashable {
    public var batchSize = 1000
    public var mergePolicy = MergePolicy.error
    public var timeout: Double?
    public var retries = 0
}

/// Shell commands run after a job ends (`/bin/sh -c`).
public struct Hooks: Sendable, Hashable {
    public var onSuccess: String?
    public var onFailure: String?
    public var onComplete: String?

    public var isEmpty: Bool { onSuccess == nil && onFailure == nil && onComplete == nil }
}

/// One job: steps run in order in its own context, after the jobs it needs succeeded.
public struct Job: Sendable, Hashable {
    public var name: String
    public var needs: [String]
    public var steps: [Step]
    public var mergePolicy: MergePolicy
    public var batchSize: Int
    public var atomic: Bool
    /// Seconds; nil means no limit.
    public var timeout: Double?
    public var retries: Int
    public var hooks: Hooks
    public var description: String?
    public var location: SourceLocation

    /// The batch size for a step: the step's own, else the job's (which includes the defaults).
    public func batchSize(for step: Step) -> Int {
        step.batchSize ?? batchSize
    }
}
