import BatchRunKit
import Foundation
import Testing
import TestSupport

/// A PostgreSQL queue's live snapshot (what `batchrun serve` shows each second) reads only what
/// the page shows, however many rows the table holds: exact counts, the newest finished and
/// failed items, the next pending ones in the order a claim takes them.
@Suite("PostgreSQL live snapshot")
struct PostgresLiveSnapshotTests {
    @Test("counts exact, the 50 newest done items newest first, the next pending in claim order (priority, then first due)")
    func liveSnapshot() throws {
        let url = try PostgresServer.database("live_snapshot")
        let queue = try PostgresQueue(url: url)
        for number in 0..<130 { _ = try queue.submit(text: "version: 1\n", name: "item\(number).yaml", params: [:], directory: "/tmp") }
        // Ids 1-120 done, their end times in another order than their ids; 121-125 failed; 126-130 pending,
        // 128 before the others by its priority.
        _ = try PostgresServer.psql(url, """
            UPDATE _batchrun_queue SET state = 'done', ended_at = now() - ((id * 37) % 120) * interval '1 second' WHERE id <= 120;
            UPDATE _batchrun_queue SET state = 'failed', ended_at = now() WHERE id BETWEEN 121 AND 125;
            UPDATE _batchrun_queue SET priority = 5 WHERE id = 128
            """)
        let snapshot = try queue.snapshot(.live(finishedShown: 50))
        #expect(snapshot.counts["done"] == 120 && snapshot.counts["failed"] == 5 && snapshot.counts["pending"] == 5)
        let newestFirst = (1...120).sorted { ($0 * 37) % 120 < ($1 * 37) % 120 }.prefix(50).map(String.init)
        #expect(snapshot.items(in: [.done]).map(\.key) == Array(newestFirst))
        #expect(Set(snapshot.items(in: [.failed]).map(\.key)) == Set((121...125).map(String.init)))
        #expect(snapshot.items(in: [.pending]).map(\.key) == ["128", "126", "127", "129", "130"])
    }
}
