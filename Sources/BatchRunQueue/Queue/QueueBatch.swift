import BatchRunEngine
import BatchRunFeeds
import Foundation

/// A fan-out batch (`submit --fan-out JOB`, JOBFILE.md 17) as `queue` shows it: its parts'
/// items by state, the rows they wrote so far, and its completion item.
///
/// ```swift
/// for batch in try openQueue(at: "var/queue").batches() {
///     print(batch.id, batch.job, batch.parts["done", default: 0], "of", batch.partCount, batch.completion?.state ?? "-")
/// }
/// ```
package struct QueueBatch: Sendable, Encodable, Hashable {
    package struct Completion: Sendable, Encodable, Hashable {
        /// The item, once queued (as `queue --log` and `cancel` take it); nil while `waiting`.
        package var id: String?
        /// The item's state, or `waiting` until every part ended done.
        package var state: String
    }

    package var id: Int64
    package var job: String
    /// The parts' items by state; parts not queued yet (the jobs the batch's job needs have
    /// not ended done) count as `waiting`.
    package var parts: [String: Int]
    /// Rows the parts wrote so far: the done parts' runs, and how far the running ones are.
    package var rows: Int
    /// Nil when no job remains after the fanned-out one (the batch ends with its last part).
    package var completion: Completion?

    package var partCount: Int { parts.values.reduce(0, +) }

    /// Every part done and the completion (when there is one) done: nothing more will run.
    package var isFinished: Bool {
        parts[QueueItemState.done.rawValue, default: 0] == partCount && (completion.map { $0.state == QueueItemState.done.rawValue } ?? true)
    }

    /// `waiting` for what a batch has not queued yet.
    package static let waiting = "waiting"

    package init(id: Int64, job: String, parts: [String: Int], rows: Int, completion: Completion?) {
        self.id = id
        self.job = job
        self.parts = parts
        self.rows = rows
        self.completion = completion
    }
}

/// What a batch's item is: the batch's number, and what it runs of its job file.
///
/// ```swift
/// let membership = QueueBatchMembership(batch: 3, role: .completion(job: "load"))
/// ```
package struct QueueBatchMembership: Codable, Sendable, Hashable {
    package var batch: Int64
    package var role: FanOutRole

    package init(batch: Int64, role: FanOutRole) {
        self.batch = batch
        self.role = role
    }
}

/// What `Queue.submitBatch` queued: the batch's number and how many parts it has.
package struct QueueBatchSubmitted: Sendable, Hashable {
    package var id: Int64
    package var parts: Int

    package init(id: Int64, parts: Int) {
        self.id = id
        self.parts = parts
    }
}
