import BatchRunStore
import BatchRunEngine

/// The fence of a PostgreSQL queue item's run: when the job file's store is the queue's
/// database, each of the run's write transactions commits only while the item's claim is this
/// token (`PostgresQueue.fence(item:token:)`), so a worker that lost its lease
/// cannot commit again.
///
/// ```swift
/// let opened = try RunOpening.open(file, resume: true, fence: item.fence)
/// ```
package struct QueueFence: RunFence, Hashable {
    package var item: Int64
    package var token: Int64
    /// The lease, in seconds: also how long a paused run's transaction may stay idle (`idleTimeout`).
    package var lease: Double
    /// The queue's database (its URL).
    package var queue: String

    package init(item: Int64, token: Int64, lease: Double, queue: String) {
        self.item = item
        self.token = token
        self.lease = lease
        self.queue = queue
    }

    /// The run's write fence when `store` is the queue's database (only then can its writes be
    /// fenced), nil for any other store.
    package func writeFence(for store: StoreSpec) -> WriteFence? {
        holds(store) ? writeFence : nil
    }

    /// How long a transaction of the fenced run may stay idle: the lease.
    package var idleTimeout: Double { lease }

    /// True when `store` is the queue's database: then its writes can be fenced.
    package func holds(_ store: StoreSpec) -> Bool {
        #if PostgreSQL
        PostgresQueue.holds(store, queue: queue)
        #else
        false
        #endif
    }

    /// The condition every write transaction of the run checks as it commits.
    package var writeFence: WriteFence {
        #if PostgreSQL
        PostgresQueue.fence(item: item, token: token)
        #else
        WriteFence(sql: "SELECT 1 WHERE false", arguments: [], refusal: "this build has no PostgreSQL queues")
        #endif
    }
}
