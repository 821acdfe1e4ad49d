/// What `batchrun pause` paused (JOBFILE.md 18): the whole queue, and groups by name. No
/// worker claims a new item of what is paused; running items finish.
///
/// ```swift
/// try queue.setPaused(true, group: "warehouse")
/// try queue.pause().groups   // ["warehouse"]
/// ```
package struct QueuePause: Sendable, Hashable {
    package var queue: Bool
    package var groups: [String]

    package init(queue: Bool = false, groups: [String] = []) {
        self.queue = queue
        self.groups = groups
    }
}
