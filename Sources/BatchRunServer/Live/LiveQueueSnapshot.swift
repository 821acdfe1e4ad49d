import BatchRunKit
import Foundation

/// What `batchrun serve` shows of a queue at one moment: counts per state, the running items
/// with their progress, the waiting ones with their times, the schedules, the last finished
/// and failed items. Only what is shown is read: a folder of 10,000 finished items costs a
/// directory listing, not 10,000 reads.
///
/// ```swift
/// let snapshot = LiveQueueSnapshot(folder: try QueueFolder(path: "var/queue"))
/// snapshot.counts[.running]
/// ```
package struct LiveQueueSnapshot: Sendable {
    /// One item as the page shows it.
    package struct Item: Sendable {
        package var name: String
        /// What its links name it by: a folder item's file name, a PostgreSQL item's id.
        package var key: String
        package var state: QueueItemState
        package var process: String?
        package var jobs: [String] = []
        package var rows: Int?
        package var startedAt: Date?
        /// Done of its running feeds (bytes read of their size); nil when not known.
        package var fraction: Double?
        package var runAt: String?
        package var attempts = 0
        package var maxAttempts = 1
        package var priority = 0
        package var error: String?
        package var endedAt: Date?
        package var orphaned = false
        package var cancelling = false

        /// What its run published of its progress.
        mutating func show(_ progress: ItemProgress) {
            process = "\(progress.pid)@\(progress.host)"
            jobs = progress.jobs
            rows = progress.rows
            fraction = progress.fraction
            startedAt = progress.startedAt
        }
    }

    /// How many finished (and failed) items are listed, newest first.
    package static let finishedShown = 50

    package var location: String
    package var takenAt = Date()
    package var counts: [QueueItemState: Int] = [:]
    package var running: [Item] = []
    package var waiting: [Item] = []
    package var schedules: [QueueScheduleListing] = []
    package var finished: [Item] = []
    package var failed: [Item] = []

    /// Nothing yet (a queue that could not be read).
    package init(location: String) {
        self.location = location
    }

    /// A queue folder: running, scheduled and retryable items described, the newest finished ones too.
    package init(folder queue: QueueFolder) {
        var finished = Self.finishedIndexes(of: queue)
        self.init(folder: queue, finished: &finished)
    }

    /// The indexes of a queue folder's finished states, empty until their first refresh.
    static func finishedIndexes(of queue: QueueFolder) -> [QueueItemState: FinishedFolderIndex] {
        Dictionary(uniqueKeysWithValues: [QueueItemState.done, .cancelled, .failed].map { ($0, FinishedFolderIndex(folder: queue.folder($0))) })
    }

    /// A queue folder, its finished states through `finished` (kept by the caller between
    /// snapshots: a folder that did not change is not listed again). Only what is shown is
    /// read: the shown failed items' first error lines; pending items are counted, not listed.
    init(folder queue: QueueFolder, finished indexes: inout [QueueItemState: FinishedFolderIndex]) {
        location = queue.path
        for state in QueueItemState.allCases {
            switch state {
            case .running:
                let names = queue.items(in: state)
                counts[state] = names.count
                running = names.map { Self.running($0, in: queue) }
            case .scheduled, .retryable:
                let names = queue.items(in: state)
                counts[state] = names.count
                waiting += names.map { Self.item(QueueSnapshot.item($0, state: state, in: queue)) }
            case .done, .cancelled, .failed:
                var index = indexes[state] ?? FinishedFolderIndex(folder: queue.folder(state))
                index.refresh(shown: Self.finishedShown, now: takenAt)
                indexes[state] = index
                counts[state] = index.count
                let items = index.newest.map { name, date in
                    var item = state == .failed ? Self.item(QueueSnapshot.item(name, state: state, in: queue))
                        : Item(name: name, key: name, state: state)
                    item.endedAt = date
                    return item
                }
                if state == .failed { failed = items } else { finished += items }
            case .pending:
                counts[state] = FolderEntries.itemCount(in: queue.folder(state))
            }
        }
        finished = Array(finished.sorted { ($0.endedAt ?? .distantPast) > ($1.endedAt ?? .distantPast) }.prefix(Self.finishedShown))
        schedules = ((try? queue.schedules()) ?? []).map { QueueScheduleListing($0) }
    }

    /// A queue in PostgreSQL: its rows, a running item's with the progress its run publishes
    /// into the row (`ItemProgress`; none until the run's first second, none once the claim ended).
    package init(postgres queue: PostgresQueue) throws {
        location = queue.location
        let rows = try queue.items()
        for row in rows {
            counts[row.state, default: 0] += 1
            var item = Item(name: row.name, key: row.key, state: row.state, process: row.worker, runAt: row.runAt,
                            attempts: row.attempts, maxAttempts: row.maxAttempts, priority: row.priority,
                            error: row.error?.split(separator: "\n").first.map(String.init))
            item.endedAt = row.endedAt.flatMap(Self.postgresDate)
            item.cancelling = row.cancelling == true
            if row.state == .running {
                item.orphaned = (row.leaseLeft ?? 0) < 0
                if let progress = row.progress.flatMap({ ItemProgress.decode(Data($0.utf8)) }) { item.show(progress) }
            }
            switch row.state {
            case .running: running.append(item)
            case .scheduled, .retryable: waiting.append(item)
            case .done, .cancelled: finished.append(item)
            case .failed: failed.append(item)
            case .pending: break
            }
        }
        finished = Array(finished.sorted { ($0.endedAt ?? .distantPast) > ($1.endedAt ?? .distantPast) }.prefix(Self.finishedShown))
        failed = Array(failed.sorted { ($0.endedAt ?? .distantPast) > ($1.endedAt ?? .distantPast) }.prefix(Self.finishedShown))
        schedules = ((try? queue.schedules()) ?? []).map { QueueScheduleListing($0) }
    }

    /// A running item from the progress its run publishes beside it (`ItemProgress`), without
    /// opening its store; only its name until the run's first second.
    private static func running(_ name: String, in queue: QueueFolder) -> Item {
        var item = Item(name: name, key: name, state: .running)
        item.orphaned = !queue.isLocked(name)
        item.cancelling = FileManager.default.fileExists(atPath: queue.itemPath(name, in: .running) + ".cancel")
        if let progress = ItemProgress.read(queue.itemPath(name, in: .running) + ".progress") { item.show(progress) }
        return item
    }

    private static func item(_ listed: QueueSnapshot.Item) -> Item {
        Item(name: listed.name, key: listed.name, state: listed.state, process: listed.process, jobs: listed.jobs ?? [],
             rows: listed.rows, startedAt: listed.startedAt, fraction: listed.fraction, runAt: listed.runAt, attempts: listed.attempts,
             maxAttempts: listed.maxAttempts, priority: listed.priority, error: listed.error,
             orphaned: listed.orphaned == true, cancelling: listed.cancelling == true)
    }

    /// `2026-11-26 14:03:07.12+00`, as PostgreSQL writes a timestamptz as text (a session in UTC).
    private static func postgresDate(_ text: String) -> Date? {
        ItemProgress.date(String(text.prefix(19)).replacingOccurrences(of: " ", with: "T") + "Z")
    }
}
