import BatchRunEngine

/// A claimed queue item, as a worker's executor runs it: the job file to run (as `batchrun run
/// PATH --resume --relative-to BASE` would), where its report and output go, and the claim
/// that holds it (a folder item's lock; a PostgreSQL item's lease and fence).
///
/// ```swift
/// var loader = JobFileLoader(params: item.params)
/// loader.baseDirectory = item.baseDirectory
/// let file = try item.load(with: loader)
/// ```
package struct QueueItem: Sendable {
    /// As the worker's lines name it.
    package let name: String
    /// The job file to run: a folder item's file; a PostgreSQL item's name, as its errors
    /// name it (its text is `text`).
    package let path: String
    /// A PostgreSQL item's job file text, which is written to no file; nil for a folder item.
    package var text: String?
    /// The run's identity in the store's history, so a taken-over item resumes the same run:
    /// a folder item's path; `postgresql://HOST:PORT/DB#ID` for a PostgreSQL item.
    package var runIdentity: String { identity ?? path }
    private var identity: String?
    /// The folder its relative paths resolve against.
    package let baseDirectory: String
    package let params: [String: String]
    /// Taken over from a worker that died or lost its lease.
    package let takenOver: Bool
    /// Where its run's JSON report and its output go.
    package let reportPath: String
    package let logPath: String
    /// A folder item's locked descriptor: the process that runs the item should hold it too
    /// (a child inherits it), so the item is orphaned only when both are gone.
    package let lock: Int32?
    /// A PostgreSQL item's fence, for its run's store.
    package let fence: QueueFence?
    /// The item's expressions were prepared on the server when it was submitted; its run need
    /// not prepare them again.
    package let checkedAtSubmit: Bool
    /// Reports earlier claims of a taken-over item left on this machine (a PostgreSQL item's
    /// reports are the claim's own): one of them may be the finished run's.
    package var earlierReports: [String] = []
    /// The queue's own record of the claim.
    package let claim: Claim
    /// How many earlier attempts of the item ended failed, and how many it may have, with the
    /// backoff before the next (`submit --attempts N --backoff DURATION`).
    package var failures = 0
    package var attempts = 1
    package var backoff: Double = 30
    /// An item of a fan-out batch: the batch, and what the item runs of its job file.
    package var membership: QueueBatchMembership?

    package enum Claim: Sendable {
        case folder(QueueFolder.Claim)
        #if PostgreSQL
        case postgres(PostgresQueue.Claim)
        #endif
    }

    package init(name: String, path: String, text: String? = nil, identity: String? = nil, baseDirectory: String,
                 params: [String: String], takenOver: Bool, reportPath: String, logPath: String, lock: Int32? = nil,
                 fence: QueueFence? = nil, claim: Claim) {
        self.name = name
        self.path = path
        self.text = text
        self.identity = identity
        self.baseDirectory = baseDirectory
        self.params = params
        self.takenOver = takenOver
        self.reportPath = reportPath
        self.logPath = logPath
        self.lock = lock
        self.fence = fence
        checkedAtSubmit = fence != nil
        self.claim = claim
    }

    /// The item's job file, loaded by `loader` from its file or its text, with its run identity;
    /// a batch's item keeps what its role runs.
    package func load(with loader: JobFileLoader) throws(JobFileError) -> JobFile {
        var loader = loader
        if membership != nil { loader.listsFeedParts = false }
        let file = if let text { try loader.load(text: text, path: path, runIdentity: identity) } else { try loader.load(path: path) }
        return try membership?.role.apply(to: file) ?? file
    }

    /// The same claim of the same item: a worker that claims an item again after its own lease
    /// ran out holds two claims of it, and only the older one is lost.
    package func isSameClaim(as other: QueueItem) -> Bool {
        #if PostgreSQL
        if case .postgres(let one) = claim, case .postgres(let another) = other.claim {
            return one.id == another.id && one.token == another.token
        }
        #endif
        return path == other.path
    }
}
