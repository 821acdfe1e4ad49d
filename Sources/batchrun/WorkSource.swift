import BatchRunKit
import Foundation

/// Where a worker's items come from, and where they go when their runs end: a queue folder
/// (`FolderWorkSource`) or a queue in PostgreSQL (`PostgresWorkSource`). `QueueWorker` runs
/// the items either gives it the same way, each in a child process.
protocol WorkSource: AnyObject {
    /// The queue, as the worker's first line names it.
    var name: String { get }

    /// Claims the next item; nil when there is none to take now.
    func claimNext() throws -> WorkItem?

    /// Ends an item's claim: `done` or `failed` with its exit status, or back to `pending`.
    /// Returns false when the claim had been lost (another worker has the item).
    func finish(_ item: WorkItem, as state: QueueFolder.State, status: Int32?) throws -> Bool

    /// Renews the leases of the running items; returns those whose lease was lost.
    func renew(_ items: [WorkItem]) -> [WorkItem]

    /// Starts watching for new items: returns a descriptor to poll (the folder's inotify), or
    /// calls `wake` from another thread (PostgreSQL's notifications).
    func watch(wake: @escaping @Sendable () -> Void) -> Int32?

    /// Seconds between lease renewals; nil when claims hold no lease.
    var renewalInterval: Double? { get }
}

/// One claimed item, as its child run needs it.
struct WorkItem {
    /// As the worker's lines name it.
    let name: String
    /// The job file the child runs; also the run's identity in the store's history, so a
    /// taken-over item resumes the same run.
    let path: String
    /// The folder its relative paths resolve against.
    let relativeTo: String
    let params: [String: String]
    /// Taken over from a worker that died or lost its lease.
    let takenOver: Bool
    /// Where the child writes its report and its output.
    let reportPath: String
    let logPath: String
    /// Reports earlier claims of a taken-over item left on this machine (a PostgreSQL item's
    /// reports are the claim's own): one of them may be the finished run's.
    var earlierReports: [String] = []
    /// A descriptor the child inherits as its descriptor 3 (the folder item's lock).
    let lock: Int32?
    /// More arguments for the child's `batchrun run` (a PostgreSQL item's fence).
    let extraArguments: [String]
    /// The source's own record of the claim.
    let claim: Claim

    enum Claim {
        case folder(QueueFolder.Claim)
        case postgres(PostgresQueue.Claim)
    }

    /// The same claim of the same item: a worker that claims an item again after its own lease
    /// ran out holds two claims of it, and only the older one is lost.
    func isSameClaim(as other: WorkItem) -> Bool {
        switch (claim, other.claim) {
        case (.postgres(let one), .postgres(let another)): one.id == another.id && one.token == another.token
        default: path == other.path
        }
    }
}
