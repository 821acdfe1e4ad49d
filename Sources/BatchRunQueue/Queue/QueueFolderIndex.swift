import Foundation
import Synchronization

/// A worker's index of one folder of a queue (`pending/` or `scheduled/`): the item names in
/// the order they are taken (by a sort key), read from the folder once, then kept up to date
/// from the folder's inotify events (items renamed or linked in), so a claim among 100,000
/// pending items does not list 100,000 files. Items that left the folder (another worker
/// claimed them) are dropped when a rename of them fails; an event queue that overflowed
/// makes the next look read the folder again.
///
/// ```swift
/// let index = QueueFolderIndex(folder: "var/queue/pending", key: { $0 })
/// while let name = index.first() { if claim(name) { break } else { index.remove(name) } }
/// ```
package final class QueueFolderIndex: Sendable {
    package let folder: String
    package let key: @Sendable (String) -> String

    private struct State {
        /// Sorted by key, then name.
        var entries: [(key: String, name: String)] = []
        var watch: Int32 = -1
        var loaded = false
    }

    private let state = Mutex(State())

    package init(folder: String, key: @escaping @Sendable (String) -> String) {
        self.folder = folder
        self.key = key
    }

    deinit {
        state.withLock { if $0.watch >= 0 { close($0.watch) } }
    }

    /// The first entries (up to `limit`) in order, after taking in what arrived.
    package func first(_ limit: Int) -> [(key: String, name: String)] {
        state.withLock { state in
            refresh(&state)
            return Array(state.entries.prefix(limit))
        }
    }

    /// The entries (up to `limit`) that come after `entry` in order, after taking in what arrived:
    /// a claim that passes over items goes on from the last it looked at.
    package func entries(after entry: (key: String, name: String), limit: Int) -> [(key: String, name: String)] {
        state.withLock { state in
            refresh(&state)
            var index = Self.insertionIndex(of: entry, in: state.entries)
            if index < state.entries.count, state.entries[index].name == entry.name { index += 1 }
            return Array(state.entries[index...].prefix(limit))
        }
    }

    /// Forgets an item (claimed or moved, by this worker or another).
    package func remove(_ name: String) {
        state.withLock { state in
            let entry = (key: key(name), name: name)
            let index = Self.insertionIndex(of: entry, in: state.entries)
            if index < state.entries.count, state.entries[index].name == name { state.entries.remove(at: index) }
        }
    }

    /// Reads the folder the first time (and after an overflow), else the events since.
    private func refresh(_ state: inout State) {
        if state.watch < 0 {
            state.watch = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
            if state.watch >= 0 { _ = inotify_add_watch(state.watch, folder, UInt32(IN_MOVED_TO | IN_CREATE)) }
        }
        var overflowed = !state.loaded || state.watch < 0
        var added: [String] = []
        if state.watch >= 0 {
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let count = read(state.watch, &buffer, buffer.count)
                guard count > 0 else { break }
                var offset = 0
                while offset + 16 <= count {
                    let (mask, length) = buffer.withUnsafeBytes { raw in
                        (raw.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self), Int(raw.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)))
                    }
                    if mask & UInt32(IN_Q_OVERFLOW) != 0 { overflowed = true }
                    if length > 0 {
                        let bytes = buffer[(offset + 16)..<min(offset + 16 + length, count)].prefix { $0 != 0 }
                        added.append(String(decoding: bytes, as: UTF8.self))
                    }
                    offset += 16 + length
                }
            }
        }
        if overflowed {
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter(QueueFolder.isItem)
            state.entries = names.map { (key: key($0), name: $0) }.sorted { ($0.key, $0.name) < ($1.key, $1.name) }
            state.loaded = true
            return
        }
        for name in added where QueueFolder.isItem(name) {
            let entry = (key: key(name), name: name)
            let index = Self.insertionIndex(of: entry, in: state.entries)
            if index < state.entries.count, state.entries[index].name == name { continue }
            state.entries.insert(entry, at: index)
        }
    }

    /// Where an entry goes in the sorted entries (the first not before it).
    private static func insertionIndex(of entry: (key: String, name: String), in entries: [(key: String, name: String)]) -> Int {
        var low = 0, high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if (entries[middle].key, entries[middle].name) < (entry.key, entry.name) { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
