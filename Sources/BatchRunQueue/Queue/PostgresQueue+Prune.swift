#if PostgreSQL
import BatchRunStore
import Foundation

/// Pruning a PostgreSQL queue (`batchrun prune`, `worker --keep`, JOBFILE.md 18): finished rows
/// deleted 500 at a time, each time in a transaction of its own that locks only those rows
/// (`SKIP LOCKED`), so workers claim meanwhile as before.
extension PostgresQueue {
    /// Rows per transaction.
    static let pruneBatch = 500

    package func prune(states: Set<QueueItemState>, endedBefore before: Date) throws -> Int {
        let finished = states.filter { [.done, .failed, .cancelled].contains($0) }.map(\.rawValue).sorted()
        guard !finished.isEmpty else { return 0 }
        let list = String(decoding: try JSONEncoder().encode(finished), as: UTF8.self)
        var pruned = 0
        while true {
            let deleted = try store.writeRecords { db in
                try db.execute("""
                    DELETE FROM _batchrun_queue WHERE id IN (
                        SELECT q.id FROM _batchrun_queue AS q
                        WHERE q.state IN (SELECT json_array_elements_text(?::json)) AND q.ended_at < to_timestamp(?::double precision)
                            -- a batch's items stay until every one of them is done and nothing more is to come
                            AND (q.batch IS NULL OR q.batch IN (
                                SELECT b.id FROM _batchrun_batch AS b
                                WHERE b.parts_queued AND (NOT b.has_completion OR b.completion_item IS NOT NULL)
                                    AND NOT EXISTS (SELECT 1 FROM _batchrun_queue AS o WHERE o.batch = b.id AND o.state <> 'done')))
                            -- a schedule's latest item says its due time was queued: without it, it would be queued again
                            AND (q.schedule IS NULL OR q.scheduled_for < (SELECT max(s.scheduled_for) FROM _batchrun_queue AS s
                                                                          WHERE s.schedule = q.schedule))
                        ORDER BY q.id LIMIT \(Self.pruneBatch) FOR UPDATE SKIP LOCKED)
                    """, [.text(list), .real(before.timeIntervalSince1970)])
            }
            pruned += deleted
            if deleted < Self.pruneBatch { break }
        }
        // The records of batches none of whose items is left.
        try store.writeRecords { db in
            _ = try db.execute("""
                DELETE FROM _batchrun_batch AS b WHERE b.parts_queued AND (NOT b.has_completion OR b.completion_item IS NOT NULL)
                    AND NOT EXISTS (SELECT 1 FROM _batchrun_queue AS q WHERE q.batch = b.id)
                """)
        }
        return pruned
    }
}
#endif
