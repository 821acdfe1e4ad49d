import Foundation

/// A queue folder as a worker's queue: items claimed by locking and renaming them into
/// `running/`, the lock handed to the process that runs them; orphans (a lock nobody holds)
/// taken over at once; new items seen through inotify.
extension QueueFolder: Queue {
    package var location: String { path }
    package var hasLeases: Bool { false }

    package func submit(fileAt path: String, params: [String: String], sequence: Int) throws -> String {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let name = try submit(text: text, name: URL(fileURLWithPath: path).lastPathComponent, params: params, sequence: sequence)
        return "pending/\(name)"
    }

    package func claim(worker: String, lease: Double) throws -> QueueItem? {
        guard let claim = try claimNext() else { return nil }
        return QueueItem(name: claim.name, path: claim.path, baseDirectory: path, params: QueueFolder.params(ofItemAt: claim.path),
                         takenOver: claim.orphan, reportPath: claim.path + ".json", logPath: claim.path + ".log",
                         lock: claim.descriptor, claim: .folder(claim))
    }

    package func renew(_ item: QueueItem, lease: Double) throws -> Bool { true }

    package func finish(_ item: QueueItem, as state: QueueItemState, status: Int32?) throws -> Bool {
        // The claim's lock is held until the move: no other worker can have the item.
        guard case .folder(let claim) = item.claim else { return false }
        try finish(claim, as: state)
        return true
    }

    package func list() throws -> [QueueEntry] {
        QueueItemState.allCases.flatMap { state in items(in: state).map { QueueEntry(id: $0, name: $0, state: state) } }
    }

    package func watch(wake: @escaping @Sendable () -> Void) -> Int32? {
        let watch = inotify_init1(Int32(IN_NONBLOCK))
        guard watch >= 0 else { return nil }
        _ = inotify_add_watch(watch, folder(.pending), UInt32(IN_MOVED_TO | IN_CLOSE_WRITE | IN_CREATE))
        return watch
    }
}
