import BatchRunStore
import Foundation

/// A queue folder: job files dropped into `pending/`, claimed into `running/` by workers, and
/// moved to `done/` or `failed/` with their report (`ITEM.json`) and log (`ITEM.log`).
///
/// An item is a `.yaml` or `.yml` file whose name does not start with `.`; items run in name
/// order. A worker claims an item by locking it (`flock`) and renaming it from `pending/` into
/// `running/`, and holds the lock while it runs: the kernel releases it when the worker dies,
/// so an item in `running/` whose lock nobody holds was orphaned and is taken over at once.
///
/// ```swift
/// let queue = try QueueFolder(path: "var/queue")
/// let name = try queue.submit(text: jobText, name: "nightly.yaml", params: ["cutoff": "2026-02-01"])
/// if let claim = try queue.claimNext() { print(claim.name, claim.path) }
/// ```
package struct QueueFolder: Sendable {
    /// The queue folder (the one holding `pending/`); items' relative paths resolve against it.
    package let path: String
    /// This process's indexes of `pending/` (in name order) and `scheduled/` (by due time), so a
    /// claim does not list every item.
    let pendingIndex: QueueFolderIndex
    let scheduledIndex: QueueFolderIndex
    /// This value's indexes of its finished states, kept between live snapshots.
    let finishedIndexes = FinishedFolderIndex.Kept()
    /// This value's rows of done batch parts, kept between snapshots.
    let doneRows = DoneRowsCache()
    /// This value's groups of the pending items it looked at.
    let itemGroups = ItemGroupCache()

    /// Opens a queue, making its folders when missing.
    package init(path: String) throws {
        self.path = URL(fileURLWithPath: path).standardizedFileURL.path
        pendingIndex = QueueFolderIndex(folder: self.path + "/" + QueueItemState.pending.rawValue) { $0 }
        scheduledIndex = QueueFolderIndex(folder: self.path + "/" + QueueItemState.scheduled.rawValue) {
            QueueFolderName.dueStamp(of: $0).map(String.init) ?? ""
        }
        for state in QueueItemState.allCases {
            try FileManager.default.createDirectory(atPath: folder(state), withIntermediateDirectories: true)
        }
    }

    package func folder(_ state: QueueItemState) -> String { path + "/" + state.rawValue }

    package func itemPath(_ name: String, in state: QueueItemState) -> String { folder(state) + "/" + name }

    /// The items of a folder, in run order (names starting with `.` and sidecars are ignored).
    package func items(in state: QueueItemState) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder(state))) ?? []
        return names.filter(Self.isItem).sorted()
    }

    /// True for an item's file name: not hidden, `.yaml` or `.yml`, no `/` and no control character
    /// (a NUL would end the name the system sees before the name the queue was given).
    package static func isItem(_ name: String) -> Bool {
        !name.hasPrefix(".") && (name.hasSuffix(".yaml") || name.hasSuffix(".yml"))
            && name.utf8.allSatisfy { $0 >= 0x20 && $0 != 0x7F && $0 != UInt8(ascii: "/") }
    }

    // MARK: Submitting

    /// The first line of an item that carries its `--param` values.
    static let paramsPrefix = "# batchrun-params: "
    /// The line of an item that carries its attempts and backoff (`# batchrun-retry: 3 30`).
    static let retryPrefix = "# batchrun-retry: "

    /// Writes a job file into `pending/` (or `scheduled/` when it is due later) under a name
    /// that sorts in run order (`QueueFolderName`), written beside the queue and linked in
    /// (never seen half written), its params and retry settings on its first lines. Returns the
    /// item's name.
    package func submit(text: String, name: String, params: [String: String], at date: Date = QueueClock.now(), sequence: Int = 1,
                        submission: QueueSubmission = QueueSubmission()) throws -> String {
        try write(Self.content(text: text, params: params, submission: submission),
                  name: { QueueFolderName(priority: submission.priority, due: submission.dueTime(now: date), number: $0,
                                          base: URL(fileURLWithPath: name).deletingPathExtension().lastPathComponent).text },
                  into: submission.dueTime(now: date) > date ? .scheduled : .pending, from: sequence)
    }

    /// An item's text as queued: its header lines, then the job file.
    package static func content(text: String, params: [String: String], submission: QueueSubmission) throws -> String {
        var content = text
        if !params.isEmpty {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            content = Self.paramsPrefix + String(decoding: try encoder.encode(params), as: UTF8.self) + "\n" + content
        }
        if submission.attempts > 1 { content = Self.retryPrefix + "\(submission.attempts) \(submission.backoff)\n" + content }
        if let group = submission.group { content = Self.groupPrefix + group + "\n" + content }
        return content
    }

    /// Writes `content` beside the queue and links it into `state`'s folder under the first
    /// free name `name(number)` from `number` on; the name.
    package func write(_ content: String, name: (Int) -> String, into state: QueueItemState, from number: Int) throws -> String {
        let temporary = path + "/.submit-\(UUID().uuidString)"
        try Data(content.utf8).write(to: URL(fileURLWithPath: temporary))
        defer { unlink(temporary) }
        // link() fails when the name is taken (another submitter in the same millisecond): the next number.
        var number = number
        while true {
            let item = name(number)
            // A scheduled item's name must be free in pending/ too, where it goes when due.
            if state == .pending || !FileManager.default.fileExists(atPath: itemPath(item, in: .pending)) {
                if link(temporary, itemPath(item, in: state)) == 0 { return item }
                guard errno == EEXIST else { throw FileAccessError(.write, path: itemPath(item, in: state), errno: errno) }
            }
            guard number < 9999 else {
                throw FileAccessError(.write, path: itemPath(item, in: state), reason: "9,999 items were submitted in the same millisecond")
            }
            number += 1
        }
    }

    package static func stamp(_ date: Date) -> String { QueueFolderName.stamp(date) }

    /// The `--param` values an item carries on its first lines.
    package static func params(ofItemAt path: String) -> [String: String] {
        guard let line = headerLines(ofItemAt: path).first(where: { $0.hasPrefix(paramsPrefix) }) else { return [:] }
        return (try? JSONDecoder().decode([String: String].self, from: Data(line.dropFirst(paramsPrefix.count).utf8))) ?? [:]
    }

    /// The attempts and backoff an item carries (1 attempt when it says none).
    package static func retry(ofItemAt path: String) -> (attempts: Int, backoff: Double) {
        guard let line = headerLines(ofItemAt: path).first(where: { $0.hasPrefix(retryPrefix) }) else { return (1, 30) }
        let fields = line.dropFirst(retryPrefix.count).split(separator: " ")
        return (fields.first.flatMap { Int($0) } ?? 1, fields.dropFirst().first.flatMap { Double($0) } ?? 30)
    }

    /// The `# batchrun-` lines an item starts with.
    static func headerLines(ofItemAt path: String) -> [Substring] {
        guard let handle = FileHandle(forReadingAtPath: path) else { return [] }
        defer { try? handle.close() }
        let head = String(decoding: (try? handle.read(upToCount: 64 * 1024)) ?? Data(), as: UTF8.self)
        return Array(head.split(separator: "\n", maxSplits: 6).prefix(6).prefix { $0.hasPrefix("# batchrun-") })
    }

    // MARK: Claiming

    /// An item a worker holds: its lock stays held for as long as the claim lives.
    package final class Claim: Sendable {
        package let name: String
        package let path: String
        /// True when the item was taken over from a worker that died.
        package let orphan: Bool
        /// The locked file descriptor (inherited by the worker's child, so the lock is held
        /// while either of them lives).
        package let descriptor: Int32

        package init(name: String, path: String, orphan: Bool, descriptor: Int32) {
            self.name = name
            self.path = path
            self.orphan = orphan
            self.descriptor = descriptor
        }

        /// Releases the lock.
        package func release() { close(descriptor) }
    }

    /// Takes over an orphan (an item in `running/` whose lock nobody holds), else moves the
    /// items that are due from `scheduled/` and `retryable/` into `pending/` and claims the
    /// first pending item; nil when there is nothing to take now.
    package func claimNext(now: Date = QueueClock.now()) throws -> Claim? {
        let paused = (try? pause()) ?? QueuePause()
        if paused.queue { return nil }   // `batchrun pause`: nothing is claimed, not even an orphan
        for name in items(in: .running) {
            let path = itemPath(name, in: .running)
            guard let descriptor = Self.lock(path) else { continue }
            // Still in running/ once locked: it was not finished and moved meanwhile.
            if FileManager.default.fileExists(atPath: path) {
                unlink(path + ".progress")   // the dead run's: the page shows none until this claim's run publishes
                return Claim(name: name, path: path, orphan: true, descriptor: descriptor)
            }
            close(descriptor)
        }
        promoteDue(now: now)
        // An item of a group at one of its limits is passed over (`batchrun limit`).
        let limits = Dictionary(((try? self.limits()) ?? []).map { ($0.group, $0) }) { first, _ in first }
        var blocked = Set(paused.groups)
        // The last item passed over: the next look goes on after it (not from the first again).
        var passedOver: (key: String, name: String)?
        while true {
            let next = passedOver.map { pendingIndex.entries(after: $0, limit: 16) } ?? pendingIndex.first(16)
            if next.isEmpty { return nil }
            for entry in next {
                let name = entry.name
                let from = itemPath(name, in: .pending), to = itemPath(name, in: .running)
                var admitted: (limit: QueueGroupLimit, lock: Int32)?
                if !limits.isEmpty || !blocked.isEmpty, let group = itemGroups.group(of: name, at: from),
                   blocked.contains(group) || limits[group] != nil {
                    guard !blocked.contains(group), let limit = limits[group], let lock = admission(for: limit, now: now) else {
                        blocked.insert(group)
                        passedOver = entry
                        continue
                    }
                    admitted = (limit, lock)
                }
                // Claimed, or gone (another worker has it): either way no longer pending here.
                pendingIndex.remove(name)
                itemGroups.forget(name)
                // Locked before the rename, so no other worker can take it for an orphan in between.
                guard let descriptor = Self.lock(from) else {
                    if let admitted { close(admitted.lock) }
                    continue
                }
                if rename(from, to) == 0 {
                    if let admitted { recordStart(for: admitted.limit, lock: admitted.lock) }
                    return Claim(name: name, path: to, orphan: false, descriptor: descriptor)
                }
                if let admitted { close(admitted.lock) }
                close(descriptor)
            }
        }
    }

    /// When a waiting item is due: a scheduled one at the time its name carries, a retryable
    /// one at its next try (its file's modification time).
    package func due(_ name: String, in state: QueueItemState) -> Date {
        if state == .retryable {
            let attributes = try? FileManager.default.attributesOfItem(atPath: itemPath(name, in: state))
            return attributes?[.modificationDate] as? Date ?? .distantPast
        }
        return state == .scheduled ? QueueFolderName.due(of: name) ?? .distantPast : .distantPast
    }

    /// Moves the scheduled and retryable items that are due into `pending/` (a rename: however
    /// many workers do it at once, each item moves once), a retryable one with its log.
    func promoteDue(now: Date) {
        let stamp = QueueFolderName.stamp(now)
        while true {
            let due = scheduledIndex.first(64).filter { $0.key <= stamp }
            if due.isEmpty { break }
            for (_, name) in due {
                scheduledIndex.remove(name)
                _ = rename(itemPath(name, in: .scheduled), itemPath(name, in: .pending))
            }
        }
        for name in items(in: .retryable) where due(name, in: .retryable) <= now {
            // The log and failure count first: once the item is in pending/, a worker may claim it.
            for suffix in Self.retrySidecars { _ = rename(itemPath(name + suffix, in: .retryable), itemPath(name + suffix, in: .running)) }
            _ = rename(itemPath(name, in: .retryable), itemPath(name, in: .pending))
        }
    }

    /// What a retryable item keeps beside it: its log so far and how many attempts failed.
    static let retrySidecars = [".log", ".failures"]

    /// How many attempts of a running item ended failed before this one.
    package func failures(of name: String) -> Int {
        (try? String(contentsOfFile: itemPath(name + ".failures", in: .running), encoding: .utf8))
            .flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? 0
    }

    /// An exclusive lock on the file, without waiting; nil when another process holds it.
    /// Close-on-exec: only the child an item is handed to holds its lock, never the children
    /// started for other items.
    package static func lock(_ path: String) -> Int32? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { return descriptor }
        close(descriptor)
        return nil
    }

    /// True when a process holds the lock of the item in `running/` (it is being run).
    package func isLocked(_ name: String) -> Bool {
        guard let descriptor = Self.lock(itemPath(name, in: .running)) else { return true }
        close(descriptor)
        return false
    }

    /// Moves a running item to `state`: to `done/`, `failed/` or `cancelled/` with its report
    /// and log; back to `pending/` alone (its log stays in `running/`, where its next attempt
    /// adds to it); to `retryable/` with its log and failure count, due at `retryAt`.
    package func finish(_ claim: Claim, as state: QueueItemState, retryAt: Date? = nil) throws {
        unlink(claim.path + ".cancel")
        unlink(claim.path + ".progress")   // left by a run that was killed before it could remove it
        if state == .retryable {
            let failures = self.failures(of: claim.name) + 1
            try Data("\(failures)\n".utf8).write(to: URL(fileURLWithPath: claim.path + ".failures"))
            try? FileManager.default.removeItem(atPath: claim.path + ".json")
            for suffix in Self.retrySidecars where FileManager.default.fileExists(atPath: claim.path + suffix) {
                guard rename(claim.path + suffix, itemPath(claim.name + suffix, in: .retryable)) == 0 else {
                    throw FileAccessError(.move, path: claim.path + suffix, errno: errno)
                }
            }
            try FileManager.default.setAttributes([.modificationDate: retryAt ?? QueueClock.now()], ofItemAtPath: claim.path)
        } else if state != .pending {
            for suffix in [".json", ".log", ".failures"] {
                let sidecar = claim.path + suffix
                if FileManager.default.fileExists(atPath: sidecar) {
                    guard rename(sidecar, itemPath(claim.name + suffix, in: state)) == 0 else { throw FileAccessError(.move, path: sidecar, errno: errno) }
                }
            }
        }
        guard rename(claim.path, itemPath(claim.name, in: state)) == 0 else { throw FileAccessError(.move, path: claim.path, errno: errno) }
        claim.release()
    }

    // MARK: Cancelling

    /// Cancels an item by its name: a waiting one moves to `cancelled/` (a rename: a worker
    /// that claims it at the same moment has it, or not); a running one is marked
    /// (`running/NAME.cancel`), and its worker cancels its run and moves it to `cancelled/`.
    package func cancel(_ name: String) -> QueueCancellation {
        guard Self.isItem(name), !name.contains("/") else { return .notFound }
        // Twice: an item moves from scheduled/ to pending/ to running/ while it is looked for.
        for _ in 0..<2 {
            for state in [QueueItemState.pending, .scheduled, .retryable] {
                if rename(itemPath(name, in: state), itemPath(name, in: .cancelled)) == 0 {
                    // Its log of earlier attempts: beside a retryable item, in running/ for a pending one.
                    let sidecars = state == .retryable ? state : .running
                    for suffix in Self.retrySidecars { _ = rename(itemPath(name + suffix, in: sidecars), itemPath(name + suffix, in: .cancelled)) }
                    releaseUnique(of: name)
                    return .cancelled
                }
            }
            if FileManager.default.fileExists(atPath: itemPath(name, in: .running)) {
                _ = FileManager.default.createFile(atPath: itemPath(name + ".cancel", in: .running), contents: nil)
                // Still running once marked: its worker sees the mark. Else it ended meanwhile.
                if FileManager.default.fileExists(atPath: itemPath(name, in: .running)) { return .requested }
                unlink(itemPath(name + ".cancel", in: .running))
            }
        }
        for state in [QueueItemState.done, .failed, .cancelled] where FileManager.default.fileExists(atPath: itemPath(name, in: state)) {
            return .ended(state)
        }
        return .notFound
    }

    /// True when `cancel` marked the running item.
    package func isCancelRequested(_ claim: Claim) -> Bool {
        FileManager.default.fileExists(atPath: claim.path + ".cancel")
    }
}
