/// A queue of job files for workers, on one machine or many: a queue folder, or a table in a
/// PostgreSQL database (`postgresql://...`), chosen by its location. A `Worker` drains it.
///
/// ```swift
/// let queue = try JobQueue(at: "var/queue")          // or "postgresql://batch@db/nightly"
/// try queue.submit(fileAt: "jobs/nightly.yaml", params: ["cutoff": "2026-02-01"])
/// for entry in try queue.list() { print(entry.id, entry.name, entry.state) }
/// ```
public final class JobQueue: Sendable {
    /// The queue kind behind it.
    package let queue: any Queue

    /// Opens the queue at `location` (a folder's folders, or the database's table, made when missing).
    public init(at location: String) throws {
        queue = try openQueue(at: location)
    }

    /// The queue as messages name it: a folder's absolute path, a database's URL (no password).
    package var location: String { queue.location }

    /// Queues the job file at `path` with its params; returns the item as the queue names it.
    @discardableResult
    public func submit(fileAt path: String, params: [String: String] = [:]) throws -> String {
        try queue.submit(fileAt: path, params: params, sequence: 1, submission: QueueSubmission()).name
    }

    /// Every item, in run order, with its state.
    public func list() throws -> [QueueEntry] {
        try queue.list()
    }
}
