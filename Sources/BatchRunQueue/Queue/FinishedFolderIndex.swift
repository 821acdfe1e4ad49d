import Foundation
import Synchronization

/// A finished state's folder (`done/`, `failed/` or `cancelled/`) as a live snapshot keeps it between
/// snapshots: how many items it holds and the newest `shown` of them by end time (the
/// modification time of the item's report, else of the item). Its memory does not grow with the
/// folder: a listing streams the entries (`readdir`) and stats each item as it comes, keeping
/// only the count and the newest `shown` names; nothing is kept per item between listings, so
/// no end time can go stale (a report replaced in place, or a new one given a freed inode, is
/// stat'ed again at the next listing). A folder whose modification time did not move is not
/// listed again for up to a minute.
///
/// ```swift
/// var index = FinishedFolderIndex(folder: "var/queue/done")
/// index.refresh(shown: 50)
/// print(index.count, index.newest.first?.name ?? "none")
/// ```
package struct FinishedFolderIndex: Sendable {
    package let folder: String
    /// The items in the folder at the last listing whose end time could be read (an item whose
    /// report and file both fail to stat, e.g. removed during the listing, is not counted).
    package private(set) var count = 0
    /// The newest items, newest first.
    package private(set) var newest: [(name: String, ended: Date)] = []
    /// The folder's modification time at the last listing, and when that listing started.
    private var listedChange: timespec?
    private var listedAt = Date.distantPast

    package init(folder: String) {
        self.folder = folder
    }

    /// The indexes of a queue folder's finished states, kept by the `QueueFolder` value between
    /// its live snapshots.
    package final class Kept: Sendable {
        private let indexes = Mutex<[QueueItemState: FinishedFolderIndex]>([:])

        init() {}

        /// The index of `state`'s folder of `queue`, brought up to date.
        func refreshed(_ state: QueueItemState, of queue: QueueFolder, shown: Int, now: Date) -> FinishedFolderIndex {
            indexes.withLock { indexes in
                var index = indexes[state] ?? FinishedFolderIndex(folder: queue.folder(state))
                index.refresh(shown: shown, now: now)
                indexes[state] = index
                return index
            }
        }
    }

    /// Brings the count and the newest `shown` items up to date. The listing is skipped when the
    /// folder's modification time is the one it had at the last listing, that time was more
    /// than 2 s before that listing (an entry added in the same clock tick as the last change
    /// would not move it) and the listing is under a minute old (a bound on what a clock that
    /// disagrees, on a shared file system, could hide, and on how long a report rewritten in
    /// place, which does not move the folder's time, shows its old time).
    package mutating func refresh(shown: Int, now: Date = Date()) {
        guard let directory = opendir(folder) else {
            (count, newest, listedChange) = (0, [], nil)
            return
        }
        defer { closedir(directory) }
        let descriptor = dirfd(directory)
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return }
        let change = info.st_mtim
        if let listed = listedChange, listed.tv_sec == change.tv_sec, listed.tv_nsec == change.tv_nsec,
           Double(change.tv_sec) < listedAt.timeIntervalSince1970 - 2, now.timeIntervalSince(listedAt) < 60 {
            return
        }
        listedChange = change
        listedAt = now
        list(directory, descriptor: descriptor, shown: shown)
    }

    /// One pass over the folder: each item stat'ed as `readdir` gives it (its report
    /// `NAME.json`, else the item itself), counted when that succeeds, kept when among the newest.
    private mutating func list(_ directory: OpaquePointer, descriptor: Int32, shown: Int) {
        var counted = 0
        var newest = TopEnded(limit: shown)
        var path = [CChar](repeating: 0, count: 256 + 6)   // d_name (NAME_MAX + 1) and ".json"
        while let entry = readdir(directory) {
            let length = withUnsafeBytes(of: entry.pointee.d_name) { raw -> Int in
                let name = UnsafeRawBufferPointer(rebasing: raw[..<(raw.firstIndex(of: 0) ?? raw.count)])
                guard FolderEntries.isItem(name) else { return 0 }
                path.withUnsafeMutableBytes { $0.copyMemory(from: name) }
                return name.count
            }
            guard length > 0 else { continue }
            guard let seconds = Self.ended(&path, length: length, in: descriptor) else { continue }
            counted += 1
            if newest.admits(seconds) {
                newest.insert(path.withUnsafeBytes { String(decoding: $0.prefix(length), as: UTF8.self) }, seconds)
            }
        }
        count = counted
        self.newest = newest.items.map { ($0.name, Date(timeIntervalSince1970: $0.seconds)) }
    }

    /// The modification time of the item named by `path`'s first `length` bytes: of its report,
    /// else of itself; nil when neither can be stat'ed.
    private static func ended(_ path: inout [CChar], length: Int, in descriptor: Int32) -> Double? {
        var info = stat()
        for (index, byte) in ".json".utf8.enumerated() { path[length + index] = CChar(bitPattern: byte) }
        path[length + 5] = 0
        if fstatat(descriptor, path, &info, 0) != 0 {
            path[length] = 0
            guard fstatat(descriptor, path, &info, 0) == 0 else { return nil }
        }
        return Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
    }

    /// The `limit` newest items seen so far, newest first; ties by name, so the list does not
    /// depend on the folder's listing order.
    private struct TopEnded {
        let limit: Int
        var items: [(name: String, seconds: Double)] = []

        /// False when the list is full and `seconds` is older than its oldest.
        func admits(_ seconds: Double) -> Bool {
            limit > 0 && (items.count < limit || seconds >= (items.last?.seconds ?? 0))
        }

        mutating func insert(_ name: String, _ seconds: Double) {
            guard limit > 0 else { return }
            let at = items.firstIndex { $0.seconds < seconds || ($0.seconds == seconds && $0.name > name) } ?? items.count
            guard at < limit else { return }
            items.insert((name, seconds), at: at)
            if items.count > limit { items.removeLast() }
        }
    }
}
