/// A claimed queue item, as a worker's executor runs it: the job file to run (as `batchrun run
/// PATH --resume --relative-to BASE` would), where its report and output go, and the claim
/// that holds it (a folder item's lock; a PostgreSQL item's lease and fence).
///
/// ```swift
/// var loader = JobFileLoader(params: item.params)
/// loader.baseDirectory = item.baseDirectory
/// let file = try loader.load(path: item.path)
/// ```
package struct QueueItem: Sendable {
    /// As the worker's lines name it.
    package let name: String
    /// The job file to run; also the run's identity in the store's history, so a taken-over
    /// item resumes the same run.
    package let path: String
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

    package enum Claim: Sendable {
        case folder(QueueFolder.Claim)
        #if PostgreSQL
        case postgres(PostgresQueue.Claim)
        #endif
    }

    package init(name: String, path: String, baseDirectory: String, params: [String: String], takenOver: Bool, reportPath: String,
                 logPath: String, lock: Int32? = nil, fence: QueueFence? = nil, claim: Claim) {
        self.name = name
        self.path = path
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
