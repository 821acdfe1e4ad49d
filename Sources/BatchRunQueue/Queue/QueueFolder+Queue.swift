import Foundation

/// A queue folder as a worker's queue: items claimed by locking and renaming them into
/// `running/`, the lock handed to the process that runs them; orphans (a lock nobody holds)
/// taken over at once; new items seen through inotify.
extension QueueFolder: Queue {
    package var location: String { path }
    package var hasLeases: Bool { false }

    package func submit(fileAt path: String, params: [String: String], sequence: Int, submission: QueueSubmission) throws -> QueueSubmitted {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let name = URL(fileURLWithPath: path).lastPathComponent
        guard submission.unique else {
            let item = try submit(text: text, name: name, params: params, sequence: sequence, submission: submission)
            return QueueSubmitted(name: "\(QueueFolderName.due(of: item).map { $0 > QueueClock.now() } == true ? "scheduled" : "pending")/\(item)")
        }
        return try submitUnique(text: text, name: name, params: params, sequence: sequence, submission: submission)
    }

    package func claim(worker: String, lease: Double) throws -> QueueItem? {
        var next = try claimNext()
        if next == nil {
            // Nothing to claim: a batch a dead worker left short of its next step may have some.
            advanceBatches()
            next = try claimNext()
        }
        guard let claim = next else { return nil }
        var item = QueueItem(name: claim.name, path: claim.path, baseDirectory: path, params: QueueFolder.params(ofItemAt: claim.path),
                             takenOver: claim.orphan, reportPath: claim.path + ".json", logPath: claim.path + ".log",
                             lock: claim.descriptor, claim: .folder(claim))
        (item.attempts, item.backoff) = QueueFolder.retry(ofItemAt: claim.path)
        item.failures = failures(of: claim.name)
        item.membership = QueueFolder.membership(ofItemAt: claim.path)
        return item
    }

    package func renew(_ item: QueueItem, lease: Double) throws -> Bool { true }

    package func finish(_ item: QueueItem, as state: QueueItemState, status: Int32?, retryAt: Date?) throws -> Bool {
        // The claim's lock is held until the move: no other worker can have the item.
        guard case .folder(let claim) = item.claim else { return false }
        try finish(claim, as: state, retryAt: retryAt)
        if state != .pending && state != .retryable { releaseUnique(of: claim.name) }
        if state == .done, let batch = item.membership?.batch { advanceBatch(batch) }
        return true
    }

    /// Its log goes back to `running/`, where its next attempt adds to it, before the item goes
    /// to `pending/` (a rename: two retries at once move it once); its failure count and report go.
    package func retry(_ name: String) throws -> QueueRetry {
        guard Self.isItem(name), !name.contains("/") else { return .notFound }
        for state in [QueueItemState.failed, .cancelled] where FileManager.default.fileExists(atPath: itemPath(name, in: state)) {
            _ = rename(itemPath(name + ".log", in: state), itemPath(name + ".log", in: .running))
            for suffix in [".failures", ".json"] { unlink(itemPath(name + suffix, in: state)) }
            if rename(itemPath(name, in: state), itemPath(name, in: .pending)) == 0 { return .retried }
        }
        for state in QueueItemState.allCases where FileManager.default.fileExists(atPath: itemPath(name, in: state)) {
            return .refused(state)
        }
        return .notFound
    }

    package func failedItems(since: Date?, group: String?) throws -> [String] {
        items(in: .failed).filter { name in
            if let group, Self.group(ofItemAt: itemPath(name, in: .failed)) != group { return false }
            guard let since else { return true }
            return Self.ended(itemPath(name, in: .failed)) >= since   // when its report was written
        }
    }

    package func isCancelRequested(_ item: QueueItem) throws -> Bool {
        guard case .folder(let claim) = item.claim else { return false }
        return isCancelRequested(claim)
    }

    package func queueDueSchedules() throws -> [String] {
        try queueDueSchedules(at: QueueClock.now()).map { "pending/\($0)" }
    }

    package func list() throws -> [QueueEntry] {
        QueueItemState.allCases.flatMap { state in items(in: state).map { QueueEntry(id: $0, name: $0, state: state) } }
    }

    package func snapshot(_ extent: QueueSnapshot.Extent) throws -> QueueSnapshot {
        switch extent {
        case .everything: QueueSnapshot(of: self)
        case .live(let shown): QueueSnapshot(live: self, finishedShown: shown)
        }
    }

    /// A folder item's log and report lie beside it, in the folder of its state: `ITEM.log`
    /// (every attempt's, appended) and `ITEM.json`.
    package func output(of name: String) throws -> QueueItemOutput? {
        guard Self.isItem(name), !name.contains("/") else { return nil }
        for state in QueueItemState.allCases where FileManager.default.fileExists(atPath: itemPath(name, in: state)) {
            let path = itemPath(name, in: state)
            return QueueItemOutput(state: state, log: (try? String(contentsOfFile: path + ".log", encoding: .utf8)) ?? "",
                                   report: try? String(contentsOfFile: path + ".json", encoding: .utf8))
        }
        return nil
    }

    package func watch(wake: @escaping @Sendable () -> Void) -> Int32? {
        let watch = inotify_init1(Int32(IN_NONBLOCK))
        guard watch >= 0 else { return nil }
        _ = inotify_add_watch(watch, folder(.pending), UInt32(IN_MOVED_TO | IN_CLOSE_WRITE | IN_CREATE))
        return watch
    }
}
