import BatchRunKit
@testable import BatchRunServer
import Foundation
import Testing

/// `serve`'s snapshot of a queue folder: exact counts, the newest finished and failed items
/// only, and an index kept between snapshots that follows the folder's changes.
@Suite("Live queue snapshot")
struct LiveQueueSnapshotTests {
    /// A queue folder in a fresh temporary directory.
    static func queue() throws -> QueueFolder {
        let path = NSTemporaryDirectory() + "batchrun-snapshot-" + UUID().uuidString
        return try QueueFolder(path: path)
    }

    /// A finished item with its report and log, the report's time `ended` (seconds since 1970).
    static func finish(_ name: String, in state: QueueItemState, of queue: QueueFolder, ended: Double, report: Bool = true) throws {
        let path = queue.itemPath(name, in: state)
        try Data("version: 1\n".utf8).write(to: URL(fileURLWithPath: path))
        try Data("log\n".utf8).write(to: URL(fileURLWithPath: path + ".log"))
        let timed = report ? path + ".json" : path
        if report { try Data("{}".utf8).write(to: URL(fileURLWithPath: timed), options: .atomic) }
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: ended)], ofItemAtPath: timed)
    }

    static func name(_ number: Int) -> String { String(format: "20261126T%09d-0001-job.yaml", number) }

    @Test("counts are exact while only the 50 newest finished and failed items are listed, newest first")
    func finishedListLimited() throws {
        let queue = try Self.queue()
        defer { try? FileManager.default.removeItem(atPath: queue.path) }
        let base = 1_790_000_000.0
        // Names in one order, end times in another: the list follows the end times.
        for number in 0..<120 { try Self.finish(Self.name(number), in: .done, of: queue, ended: base + Double((number * 37) % 120)) }
        for number in 200..<205 { try Self.finish(Self.name(number), in: .cancelled, of: queue, ended: base + 1000 + Double(number), report: false) }
        for number in 300..<360 { try Self.finish(Self.name(number), in: .failed, of: queue, ended: base + Double(number)) }
        try Data("not an item".utf8).write(to: URL(fileURLWithPath: queue.folder(.done) + "/notes.txt"))

        let snapshot = try queue.snapshot(.live(finishedShown: LiveQueueServer.finishedShown))
        #expect(snapshot.counts["done"] == 120 && snapshot.counts["cancelled"] == 5 && snapshot.counts["failed"] == 60)
        let (finished, failed) = (snapshot.items(in: [.done, .cancelled]), snapshot.items(in: [.failed]))
        #expect(finished.count == LiveQueueServer.finishedShown && failed.count == LiveQueueServer.finishedShown)
        let cancelled = (200..<205).reversed().map(Self.name)
        let done = (0..<120).sorted { ($0 * 37) % 120 > ($1 * 37) % 120 }.map(Self.name)
        #expect(finished.map(\.name) == Array((cancelled + done).prefix(50)))
        #expect(finished.first?.ended == Date(timeIntervalSince1970: base + 1204))
        #expect(failed.map(\.name) == (310..<360).reversed().map(Self.name))

        let page = LiveQueuePage.page(snapshot, rates: [:], nonce: "n")
        #expect(page.contains("120 done") && page.contains("60 failed") && page.contains("5 cancelled"))
        #expect(page.contains("<h2>last finished (50)</h2>") && page.contains("<h2>failed (50)</h2>"))
        #expect(!page.contains(Self.name(0)), "item 0 ended first of all: not shown")
    }

    @Test("the index kept between snapshots sees items added and removed and a report replaced")
    func indexFollowsChanges() throws {
        let queue = try Self.queue()
        defer { try? FileManager.default.removeItem(atPath: queue.path) }
        let base = 1_790_000_000.0
        for number in 0..<60 { try Self.finish(Self.name(number), in: .done, of: queue, ended: base + Double(number)) }
        // The same QueueFolder value keeps its indexes between its live snapshots.
        let first = try queue.snapshot(.live(finishedShown: 50))
        #expect(first.counts["done"] == 60 && first.items(in: [.done]).first?.name == Self.name(59))

        try Self.finish(Self.name(60), in: .done, of: queue, ended: base + 500)
        for suffix in ["", ".json", ".log"] { try FileManager.default.removeItem(atPath: queue.itemPath(Self.name(59) + suffix, in: .done)) }
        // Item 3's report written again (a new file, as every report is), now the newest.
        try Self.finish(Self.name(3), in: .done, of: queue, ended: base + 900)
        let second = try queue.snapshot(.live(finishedShown: 50))
        let finished = second.items(in: [.done])
        #expect(second.counts["done"] == 60)
        #expect(finished.prefix(3).map(\.name) == [Self.name(3), Self.name(60), Self.name(58)])
        #expect(!finished.contains { $0.name == Self.name(59) })
        #expect(finished.count == 50 && finished.last?.name == Self.name(11))
    }

    @Test("a finished folder whose modification time did not move is not listed again, for up to a minute")
    func unchangedFolderNotListed() throws {
        let queue = try Self.queue()
        defer { try? FileManager.default.removeItem(atPath: queue.path) }
        for number in 0..<3 { try Self.finish(Self.name(number), in: .done, of: queue, ended: 1_790_000_000 + Double(number)) }
        let changed = Date().addingTimeInterval(-10)
        try FileManager.default.setAttributes([.modificationDate: changed], ofItemAtPath: queue.folder(.done))
        var index = FinishedFolderIndex(folder: queue.folder(.done))
        let now = Date()
        index.refresh(shown: 2, now: now)
        #expect(index.count == 3 && index.newest.map(\.name) == [Self.name(2), Self.name(1)])
        // An item added behind the folder's back: its modification time put back as it was.
        try Self.finish(Self.name(3), in: .done, of: queue, ended: 1_790_000_100)
        try FileManager.default.setAttributes([.modificationDate: changed], ofItemAtPath: queue.folder(.done))
        index.refresh(shown: 2, now: now.addingTimeInterval(1))
        #expect(index.count == 3, "not listed again")
        index.refresh(shown: 2, now: now.addingTimeInterval(61))
        #expect(index.count == 4 && index.newest.first?.name == Self.name(3), "listed again after a minute")
    }

    @Test("a report whose time changed under the same inode (a freed inode given to a new report) shows its new time at the next listing")
    func reportChangedInPlace() throws {
        let queue = try Self.queue()
        defer { try? FileManager.default.removeItem(atPath: queue.path) }
        let base = 1_790_000_000.0
        for number in 0..<3 { try Self.finish(Self.name(number), in: .done, of: queue, ended: base + Double(number)) }
        let folder = queue.folder(.done)
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-30)], ofItemAtPath: folder)
        var index = FinishedFolderIndex(folder: folder)
        let now = Date()
        index.refresh(shown: 2, now: now)
        #expect(index.newest.map(\.name) == [Self.name(2), Self.name(1)])
        // Item 0's report now says it ended last, and its inode is the one the index saw.
        let report = queue.itemPath(Self.name(0), in: .done) + ".json"
        let inode = try #require(try FileManager.default.attributesOfItem(atPath: report)[.systemFileNumber] as? UInt64)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: base + 100)], ofItemAtPath: report)
        #expect(try FileManager.default.attributesOfItem(atPath: report)[.systemFileNumber] as? UInt64 == inode)
        try Self.finish(Self.name(3), in: .done, of: queue, ended: base + 50)
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-20)], ofItemAtPath: folder)
        index.refresh(shown: 2, now: now.addingTimeInterval(1))
        #expect(index.count == 4)
        #expect(index.newest.map(\.name) == [Self.name(0), Self.name(3)], "item 0's new end time, not the one seen before")
        #expect(index.newest.first?.ended == Date(timeIntervalSince1970: base + 100))
    }

    @Test("an item whose report and file cannot be stat'ed is not counted; pending items are counted and listed in run order without their sidecars")
    func unreadableItemNotCounted() throws {
        let queue = try Self.queue()
        defer { try? FileManager.default.removeItem(atPath: queue.path) }
        let base = 1_790_000_000.0
        for number in 0..<3 { try Self.finish(Self.name(number), in: .done, of: queue, ended: base + Double(number)) }
        // A dangling link named as an item, no report: listed by the folder, not statable.
        try FileManager.default.createSymbolicLink(atPath: queue.itemPath(Self.name(7), in: .done), withDestinationPath: "/nonexistent/batchrun-gone.yaml")
        // A dangling report beside a real item: the item's own time is its end.
        try Self.finish(Self.name(8), in: .done, of: queue, ended: base + 8, report: false)
        try FileManager.default.createSymbolicLink(atPath: queue.itemPath(Self.name(8), in: .done) + ".json", withDestinationPath: "/nonexistent/batchrun-gone.json")
        for number in 0..<4 { try Data("version: 1\n".utf8).write(to: URL(fileURLWithPath: queue.itemPath(Self.name(number), in: .pending))) }
        try Data("".utf8).write(to: URL(fileURLWithPath: queue.itemPath(".hidden.yaml", in: .pending)))
        try Data("".utf8).write(to: URL(fileURLWithPath: queue.itemPath(Self.name(0) + ".lock", in: .pending)))

        let snapshot = try queue.snapshot(.live(finishedShown: 50))
        #expect(snapshot.counts["done"] == 4, "items 0, 1, 2 and 8; not the dangling item 7")
        #expect(snapshot.items(in: [.done]).map(\.name) == [8, 2, 1, 0].map(Self.name))
        #expect(snapshot.items(in: [.done]).first?.ended == Date(timeIntervalSince1970: base + 8))
        #expect(snapshot.counts["pending"] == 4)
        // The first 50 are listed in run order (what the page offers to cancel); not a hidden file nor a lock.
        #expect(snapshot.items(in: [.pending]).map(\.name) == (0..<4).map(Self.name))
    }

    @Test("the next 50 pending items in run order, however many ahead of them left the folder since the last snapshot")
    func nextPending() throws {
        let queue = try Self.queue()
        defer { try? FileManager.default.removeItem(atPath: queue.path) }
        for number in 0..<120 { try Data("version: 1\n".utf8).write(to: URL(fileURLWithPath: queue.itemPath(Self.name(number), in: .pending))) }
        #expect(try queue.snapshot(.live(finishedShown: 50)).items(in: [.pending]).map(\.name) == (0..<50).map(Self.name))
        // Claimed or cancelled meanwhile, by anyone: 100 of the first 110 leave (serve's index learns it only by looking).
        for number in 0..<110 where number % 11 != 0 {
            #expect(rename(queue.itemPath(Self.name(number), in: .pending), queue.itemPath(Self.name(number), in: .cancelled)) == 0)
        }
        let snapshot = try queue.snapshot(.live(finishedShown: 50))
        #expect(snapshot.counts["pending"] == 20)
        #expect(snapshot.items(in: [.pending]).map(\.name) == (Array(stride(from: 0, to: 110, by: 11)) + Array(110..<120)).map(Self.name))
    }

    @Test("published progress times are read without Foundation's ISO 8601 strategy")
    func progressTimes() throws {
        #expect(ItemProgress.date("2026-11-26T14:03:07Z") == Date(timeIntervalSince1970: 1_795_701_787))
        #expect(ItemProgress.date("2026-11-26T14:03:07.250Z") == Date(timeIntervalSince1970: 1_795_701_787.25))
        #expect(ItemProgress.date("2026-11-26T15:03:07+01:00") == Date(timeIntervalSince1970: 1_795_701_787))
        for bad in ["", "2026-11-26", "2026-11-26T14:03:07", "2026-13-26T14:03:07Z", "2026-11-26T14:03:07Zx", "2026-11-26 14:03:07Z"] {
            #expect(ItemProgress.date(bad) == nil, "\(bad)")
        }
        let published = ItemProgress(pid: 7, host: "h", jobs: ["load"], rows: 12, fraction: 0.5, startedAt: Date(timeIntervalSince1970: 1_795_701_787))
        let decoded = try #require(ItemProgress.decode(try ItemProgress.encoder.encode(published)))
        #expect(decoded.startedAt == published.startedAt && decoded.rows == 12 && decoded.jobs == ["load"])
    }

    @Test("links percent-encode every byte but ASCII letters, digits and -._")
    func pathSegments() {
        #expect(LiveQueuePage.pathSegment("20261126T1-0001-job.yaml") == "20261126T1-0001-job.yaml")
        #expect(LiveQueuePage.pathSegment("a b/é?#%") == "a%20b%2F%C3%A9%3F%23%25")
        #expect(LiveQueuePage.pathSegment("a b/é?#%").removingPercentEncoding == "a b/é?#%")
    }
}
