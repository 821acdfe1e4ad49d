import BatchRunEngine
import BatchRunFeeds
import Foundation

/// A queue of job files for workers: a folder (`QueueFolder`, for one machine or a shared
/// file system) or a table in PostgreSQL (`PostgresQueue`, for many machines). A `Worker`
/// runs either the same way through this protocol; `openQueue(at:)` opens the one a location
/// names.
///
/// ```swift
/// let queue = try openQueue(at: "var/queue")          // or "postgresql://batch@db/nightly"
/// print(try queue.submit(fileAt: "jobs/nightly.yaml", params: ["cutoff": "2026-02-01"]))
/// for entry in try queue.list() { print(entry.id, entry.name, entry.state) }
/// ```
package protocol Queue: Sendable {
    /// The queue as messages name it: a folder's absolute path, a database's URL (no password).
    var location: String { get }

    /// Queues the job file at `path` with its params (checked by the caller) as `submission`
    /// says; returns the item as the queue names it (`pending/NAME`, `item 12 on URL`), or the
    /// item already there for a unique submission. `sequence` numbers the files of one
    /// submission, so they keep their order.
    @discardableResult
    func submit(fileAt path: String, params: [String: String], sequence: Int, submission: QueueSubmission) throws -> QueueSubmitted

    /// Queues a fan-out batch (JOBFILE.md 17) of the job file at `path`: the jobs `fanOut`'s job
    /// needs as one item (none when it needs none); once that is done, one item per part of
    /// `parts`, running the job alone on it; once every part is done, the jobs that remain as
    /// one completion item, queued exactly once whoever ends the last part.
    func submitBatch(fileAt path: String, params: [String: String], submission: QueueSubmission, fanOut: FanOut,
                     parts: [FeedPart]) throws -> QueueBatchSubmitted

    /// Every fan-out batch, oldest first: its parts by state, rows so far, its completion.
    func batches() throws -> [QueueBatch]

    /// Sets a group's limits (`batchrun limit`), replacing what it had; an empty one removes them.
    func setLimit(_ limit: QueueGroupLimit) throws

    /// Every limited group, by name.
    func limits() throws -> [QueueGroupLimit]

    /// Pauses (`paused` true) or resumes the whole queue (`group` nil) or one group: while
    /// paused, no worker claims a new item of it (a claim under way ends as it would); running
    /// items finish.
    func setPaused(_ paused: Bool, group: String?) throws

    /// What is paused now.
    func pause() throws -> QueuePause

    /// Deletes the items in `states` (finished ones: done, failed, cancelled) that ended before
    /// `before`, with their logs and reports, a few hundred at a time so claims go on meanwhile;
    /// how many. Kept whatever their age: the items of a batch not finished yet, and (PostgreSQL)
    /// each schedule's latest item, which says its due time was queued. The stores' run state
    /// is not touched.
    func prune(states: Set<QueueItemState>, endedBefore before: Date) throws -> Int

    /// Appends a line to the queue's audit log.
    func appendAudit(_ entry: QueueAuditEntry) throws

    /// The audit log's newest lines (at most `QueueAuditEntry.listed`), oldest first.
    func audit() throws -> [QueueAuditEntry]

    /// Claims the next item for `worker` (`PID@HOST`): an item whose worker is gone first
    /// (taken over), else the first due one (highest priority, then earliest due, then first
    /// submitted); nil when there is none to take now. A claim
    /// on a queue with leases holds the item for `lease` seconds unless renewed.
    func claim(worker: String, lease: Double) throws -> QueueItem?

    /// True when claims hold a lease the worker must renew (`renew(_:lease:)`).
    var hasLeases: Bool { get }

    /// Extends a claim's lease; false when the claim was lost (another worker has the item).
    func renew(_ item: QueueItem, lease: Double) throws -> Bool

    /// Ends a claim: `done`, `failed` or `cancelled` with the run's exit status, with its
    /// report and log; `retryable` (its log kept) due again at `retryAt`; or back to `pending`
    /// (`status` nil; it resumes at its next claim). False when the claim had been lost:
    /// another worker has the item, and nothing changed.
    func finish(_ item: QueueItem, as state: QueueItemState, status: Int32?, retryAt: Date?) throws -> Bool

    /// Cancels the item the queue lists as `name` (a folder item's file name, a PostgreSQL
    /// item's id): a waiting one ends `cancelled`; a running one is marked, and its worker
    /// cancels its run.
    func cancel(_ name: String) throws -> QueueCancellation

    /// Puts a failed or cancelled item back to pending under its identity (`batchrun retry`): its
    /// next run resumes from its checkpoints, its attempts counted afresh. Any other item is
    /// left as it is (`.refused` with its state).
    func retry(_ name: String) throws -> QueueRetry

    /// The items that ended failed, as `retry` names them, oldest first; with `since`, only
    /// those that ended after it; with `group`, only that group's.
    func failedItems(since: Date?, group: String?) throws -> [String]

    /// True when `cancel` marked the running item: its worker should cancel its run.
    func isCancelRequested(_ item: QueueItem) throws -> Bool

    /// Adds a schedule (`batchrun schedule`), or replaces the one of that name.
    func addSchedule(_ entry: QueueScheduleEntry) throws

    /// Every schedule, by name.
    func schedules() throws -> [QueueScheduleEntry]

    /// Removes a schedule; false when there is none of that name.
    func removeSchedule(named name: String) throws -> Bool

    /// Queues a schedule's job file now, as an item of its own ("run this schedule now" on the
    /// live page); its due times are not touched. The item queued, or nil when there is no
    /// schedule of that name.
    func runScheduleNow(named name: String) throws -> String?

    /// Queues the latest due time of each schedule unless it was queued (by any worker) or came
    /// before the schedule was made; the items queued.
    func queueDueSchedules() throws -> [String]

    /// Every item, in run order, with its state.
    func list() throws -> [QueueEntry]

    /// What the queue holds now, each item with what is known of it (`.everything`: what
    /// `batchrun queue` prints as text and JSON and draws as HTML), or what a live page shows
    /// of it each second (`.live`), the same for every kind of queue.
    func snapshot(_ extent: QueueSnapshot.Extent) throws -> QueueSnapshot

    /// The output of the item the queue lists as `id` (a folder item's file name, a PostgreSQL
    /// item's id): its log, every attempt's, and its run's JSON report once it ended; nil when
    /// the queue has no such item.
    func output(of id: String) throws -> QueueItemOutput?

    /// Starts watching for new items: returns a descriptor that becomes readable when one
    /// arrives (a folder's inotify), or calls `wake` from another thread (PostgreSQL's
    /// notifications) and returns nil.
    func watch(wake: @escaping @Sendable () -> Void) -> Int32?

    /// The worker that claimed through this value ends: what was kept for its items goes (a
    /// PostgreSQL queue's scratch folder of their logs and reports).
    func workerEnded()
}

extension Queue {
    package func workerEnded() {}

    /// Every item with what is known of it, every batch and every group's limits.
    package func snapshot() throws -> QueueSnapshot {
        var snapshot = try snapshot(.everything)
        // A submit-only role that may not read them lists none.
        snapshot.batches = (try? batches()) ?? []
        snapshot.limits = (try? limits()) ?? []
        snapshot.pause = (try? pause()) ?? QueuePause()
        snapshot.audit = (try? audit()) ?? []
        return snapshot
    }

    /// Queues one job file.
    @discardableResult
    package func submit(fileAt path: String, params: [String: String] = [:], submission: QueueSubmission = QueueSubmission()) throws -> String {
        try submit(fileAt: path, params: params, sequence: 1, submission: submission).name
    }

    /// Ends a claim that is not retried.
    package func finish(_ item: QueueItem, as state: QueueItemState, status: Int32?) throws -> Bool {
        try finish(item, as: state, status: status, retryAt: nil)
    }
}

/// Opens the queue at `location`: a PostgreSQL queue for `postgresql://...` (its table created
/// when missing), else a queue folder (its folders made when missing).
///
/// ```swift
/// let queue = try openQueue(at: CommandLine.arguments[1])
/// ```
package func openQueue(at location: String) throws -> any Queue {
    try QueueLocation(location).open()
}
