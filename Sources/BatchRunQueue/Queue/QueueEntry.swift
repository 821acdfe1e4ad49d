/// One item as `Queue.list()` gives it.
///
/// ```swift
/// for entry in try queue.list() where entry.state == .failed { print(entry.name) }
/// ```
public struct QueueEntry: Sendable, Hashable {
    /// The item's identity in its queue: a folder item's file name, a PostgreSQL item's id.
    public var id: String
    /// The job file's name as submitted (a folder item's file name).
    public var name: String
    public var state: QueueItemState

    package init(id: String, name: String, state: QueueItemState) {
        self.id = id
        self.name = name
        self.state = state
    }
}
