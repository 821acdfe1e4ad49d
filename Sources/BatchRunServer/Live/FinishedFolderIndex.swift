import Foundation

/// A finished state's folder (`done/`, `failed/` or `cancelled/`) as `serve` keeps it between
/// snapshots: how many items it holds and the newest `shown` of them by end time (the
/// modification time of the item's report, else of the item). A folder of 10,000 finished items
/// holds 30,000 files; the first refresh lists them and stats each item's report once, later
/// ones list the folder again only when it changed and stat only items they have not seen (or
/// whose report was replaced: a retried item's new report is a new file). Per item it keeps
/// 24 bytes, no name: names are made only for the items shown.
///
/// ```swift
/// var index = FinishedFolderIndex(folder: "var/queue/done")
/// index.refresh(shown: 50)
/// print(index.count, index.newest.first?.name ?? "none")
/// ```
struct FinishedFolderIndex: Sendable {
    /// When an item ended and which file said so.
    private struct Ended: Sendable {
        /// The inode of the file whose time this is (its report, else the item).
        var inode: UInt64
        var seconds: Double
    }

    let folder: String
    /// The items in the folder at the last refresh.
    private(set) var count = 0
    /// The newest items, newest first.
    private(set) var newest: [(name: String, ended: Date)] = []
    /// Each item's end by a hash of its name (64 bits: a collision among a folder's items is
    /// out of reach; it would only misplace one item in the newest list).
    private var ended: [UInt64: Ended] = [:]
    /// The folder's modification time at the last listing, and when that listing started.
    private var listedChange: timespec?
    private var listedAt = Date.distantPast

    init(folder: String) {
        self.folder = folder
    }

    /// Brings the count and the newest `shown` items up to date. The listing is skipped when the
    /// folder's modification time is the one it had at the last listing, that time was more
    /// than 2 s before that listing (an entry added in the same clock tick as the last change
    /// would not move it) and the listing is under a minute old (a bound on what a clock that
    /// disagrees, on a shared file system, could hide).
    mutating func refresh(shown: Int, now: Date = Date()) {
        guard let directory = opendir(folder) else {
            (count, newest, ended, listedChange) = (0, [], [:], nil)
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

    /// One pass over the folder (a second would cost the kernel the whole listing again):
    /// items and their reports' inodes paired by name hash, the items' names kept one after the
    /// other in one buffer; then a stat for each item not seen before or whose report changed,
    /// and the newest kept.
    private mutating func list(_ directory: OpaquePointer, descriptor: Int32, shown: Int) {
        var names: [UInt8] = []
        var items: [(hash: UInt64, inode: UInt64, start: Int, end: Int)] = []
        var reports: [UInt64: UInt64] = [:]
        while let entry = readdir(directory) {
            let inode = UInt64(entry.pointee.d_ino)
            withUnsafeBytes(of: entry.pointee.d_name) { raw in
                let name = UnsafeRawBufferPointer(rebasing: raw[..<(raw.firstIndex(of: 0) ?? raw.count)])
                switch Self.kind(name) {
                case .item:
                    items.append((Self.hash(name), inode, names.count, names.count + name.count))
                    names.append(contentsOf: name)
                case .report: reports[Self.hash(UnsafeRawBufferPointer(rebasing: name.dropLast(5)))] = inode
                case .other: break
                }
            }
        }
        var known: [UInt64: Ended] = [:]
        known.reserveCapacity(items.count)
        var newest = TopEnded(limit: shown)
        var path: [UInt8] = []
        for item in items {
            let report = reports[item.hash]
            var seen = ended[item.hash]
            if seen == nil || seen?.inode != report ?? item.inode {
                path.removeAll(keepingCapacity: true)
                path.append(contentsOf: names[item.start..<item.end])
                if report != nil { path.append(contentsOf: ".json".utf8) }
                path.append(0)
                var info = stat()
                let found = path.withUnsafeBufferPointer { bytes in
                    bytes.withMemoryRebound(to: CChar.self) { fstatat(descriptor, $0.baseAddress!, &info, 0) == 0 }
                }
                seen = found ? Ended(inode: UInt64(info.st_ino), seconds: Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9) : nil
            }
            guard let seen else { continue }
            known[item.hash] = seen
            if newest.admits(seen.seconds) { newest.insert(String(decoding: names[item.start..<item.end], as: UTF8.self), seen.seconds) }
        }
        ended = known
        count = items.count
        self.newest = newest.items.map { ($0.name, Date(timeIntervalSince1970: $0.seconds)) }
    }

    private enum Kind { case item, report, other }

    /// An item (`NAME.yaml`, `NAME.yml`, not starting with `.`, as `QueueFolder.isItem`), an
    /// item's report (`NAME.yaml.json`), or anything else.
    private static func kind(_ name: UnsafeRawBufferPointer) -> Kind {
        guard let first = name.first, first != UInt8(ascii: ".") else { return .other }
        if name.count > 5, name.suffix(5).elementsEqual(".json".utf8) {
            return isItem(UnsafeRawBufferPointer(rebasing: name.dropLast(5))) ? .report : .other
        }
        return isItem(name) ? .item : .other
    }

    private static func isItem(_ name: UnsafeRawBufferPointer) -> Bool {
        (name.count > 5 && name.suffix(5).elementsEqual(".yaml".utf8)) || (name.count > 4 && name.suffix(4).elementsEqual(".yml".utf8))
    }

    /// FNV-1a of a name's bytes.
    private static func hash(_ name: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in name { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return hash
    }

    /// The `limit` newest items seen so far, newest first; ties by name, so the list does not
    /// depend on the folder's listing order.
    private struct TopEnded {
        let limit: Int
        var items: [(name: String, seconds: Double)] = []

        /// False when the list is full and `seconds` is older than its oldest.
        func admits(_ seconds: Double) -> Bool {
            items.count < limit || seconds >= (items.last?.seconds ?? 0)
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
