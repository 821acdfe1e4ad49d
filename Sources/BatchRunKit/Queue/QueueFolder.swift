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

    /// Opens a queue, making its folders when missing.
    package init(path: String) throws {
        self.path = URL(fileURLWithPath: path).standardizedFileURL.path
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

    package static func isItem(_ name: String) -> Bool {
        !name.hasPrefix(".") && (name.hasSuffix(".yaml") || name.hasSuffix(".yml"))
    }

    // MARK: Submitting

    /// The first line of an item that carries its `--param` values.
    static let paramsPrefix = "# batchrun-params: "

    /// Writes a job file into `pending/` under a name that sorts by submission,
    /// `YYYYMMDDTHHMMSSmmm-NNNN-NAME.yaml`, written beside the queue and renamed in (never seen
    /// half written), its params on its first line. Returns the item's name.
    package func submit(text: String, name: String, params: [String: String], at date: Date = Date(), sequence: Int = 1) throws -> String {
        var content = text
        if !params.isEmpty {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            content = Self.paramsPrefix + String(decoding: try encoder.encode(params), as: UTF8.self) + "\n" + text
        }
        let base = URL(fileURLWithPath: name).deletingPathExtension().lastPathComponent
        let stamp = Self.stamp(date)
        let temporary = path + "/.submit-\(UUID().uuidString)"
        try Data(content.utf8).write(to: URL(fileURLWithPath: temporary))
        defer { unlink(temporary) }
        // link() fails when the name is taken (another submitter in the same millisecond): the next number.
        var number = sequence
        while true {
            let item = "\(stamp)-\(String(format: "%04d", number))-\(base).yaml"
            if link(temporary, itemPath(item, in: .pending)) == 0 { return item }
            guard errno == EEXIST, number < 9999 else {
                throw FileAccessError(.write, path: itemPath(item, in: .pending),
                                      reason: errno == EEXIST ? "9,999 items were submitted in the same millisecond" : String(cString: strerror(errno)))
            }
            number += 1
        }
    }

    static func stamp(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .nanosecond], from: date)
        return String(format: "%04d%02d%02dT%02d%02d%02d%03d", c.year!, c.month!, c.day!, c.hour!, c.minute!, c.second!,
                      c.nanosecond! / 1_000_000)
    }

    /// The `--param` values an item carries on its first line.
    package static func params(ofItemAt path: String) -> [String: String] {
        guard let handle = FileHandle(forReadingAtPath: path) else { return [:] }
        defer { try? handle.close() }
        let head = String(decoding: (try? handle.read(upToCount: 64 * 1024)) ?? Data(), as: UTF8.self)
        guard head.hasPrefix(paramsPrefix), let line = head.split(separator: "\n", maxSplits: 1).first else { return [:] }
        return (try? JSONDecoder().decode([String: String].self, from: Data(line.dropFirst(paramsPrefix.count).utf8))) ?? [:]
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

        init(name: String, path: String, orphan: Bool, descriptor: Int32) {
            self.name = name
            self.path = path
            self.orphan = orphan
            self.descriptor = descriptor
        }

        /// Releases the lock.
        package func release() { close(descriptor) }
    }

    /// Takes over an orphan (an item in `running/` whose lock nobody holds), else claims the
    /// first pending item; nil when there is nothing to take.
    package func claimNext() throws -> Claim? {
        for name in items(in: .running) {
            let path = itemPath(name, in: .running)
            guard let descriptor = Self.lock(path) else { continue }
            // Still in running/ once locked: it was not finished and moved meanwhile.
            if FileManager.default.fileExists(atPath: path) { return Claim(name: name, path: path, orphan: true, descriptor: descriptor) }
            close(descriptor)
        }
        for name in items(in: .pending) {
            let from = itemPath(name, in: .pending), to = itemPath(name, in: .running)
            // Locked before the rename, so no other worker can take it for an orphan in between.
            guard let descriptor = Self.lock(from) else { continue }
            if rename(from, to) == 0 { return Claim(name: name, path: to, orphan: false, descriptor: descriptor) }
            close(descriptor)
        }
        return nil
    }

    /// An exclusive lock on the file, without waiting; nil when another process holds it.
    /// Close-on-exec: only the child an item is handed to holds its lock, never the children
    /// started for other items.
    static func lock(_ path: String) -> Int32? {
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

    /// Moves a running item to `state`: to `done/` or `failed/` with its report and log; back
    /// to `pending/` alone (its log stays in `running/`, where its next attempt adds to it).
    package func finish(_ claim: Claim, as state: QueueItemState) throws {
        for suffix in [".json", ".log"] where state != .pending {
            let sidecar = claim.path + suffix
            if FileManager.default.fileExists(atPath: sidecar) {
                guard rename(sidecar, itemPath(claim.name + suffix, in: state)) == 0 else { throw FileAccessError(.move, path: sidecar, errno: errno) }
            }
        }
        guard rename(claim.path, itemPath(claim.name, in: state)) == 0 else { throw FileAccessError(.move, path: claim.path, errno: errno) }
        claim.release()
    }
}
