import BatchRunKit
import Foundation

/// A queue folder as a worker's source: items claimed by locking and renaming them into
/// `running/`, the lock handed to the child; orphans (a lock nobody holds) taken over at once;
/// new items seen through inotify.
final class FolderWorkSource: WorkSource {
    let queue: QueueFolder

    init(queue: QueueFolder) {
        self.queue = queue
    }

    var name: String { queue.path }
    var renewalInterval: Double? { nil }

    func claimNext() throws -> WorkItem? {
        guard let claim = try queue.claimNext() else { return nil }
        return WorkItem(name: claim.name, path: claim.path, relativeTo: queue.path, params: QueueFolder.params(ofItemAt: claim.path),
                        takenOver: claim.orphan, reportPath: claim.path + ".json", logPath: claim.path + ".log",
                        lock: claim.descriptor, extraArguments: [], claim: .folder(claim))
    }

    func finish(_ item: WorkItem, as state: QueueFolder.State, status: Int32?) throws -> Bool {
        // The claim's lock is held until the move: no other worker can have the item.
        guard case .folder(let claim) = item.claim else { return false }
        try queue.finish(claim, as: state)
        return true
    }

    func renew(_ items: [WorkItem]) -> [WorkItem] { [] }

    func watch(wake: @escaping @Sendable () -> Void) -> Int32? {
        let watch = inotify_init1(Int32(IN_NONBLOCK))
        guard watch >= 0 else { return nil }
        _ = inotify_add_watch(watch, queue.folder(.pending), UInt32(IN_MOVED_TO | IN_CLOSE_WRITE | IN_CREATE))
        return watch
    }
}
