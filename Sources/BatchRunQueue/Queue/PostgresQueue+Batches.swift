#if PostgreSQL
import BatchRunContext
import BatchRunEngine
import BatchRunFeeds
import BatchRunStore
import Foundation

/// Fan-out batches in PostgreSQL (JOBFILE.md 17): a row of `_batchrun_batch` holds what the
/// batch will queue (the job file, its params and the parts listed at submit); its items are
/// rows of `_batchrun_queue` with the batch's number and their role. What comes next is queued
/// in the transaction that finishes what it waits for, under the batch row's lock: the parts in
/// the one that ends the needs item done, the completion in the one that ends the last part
/// done. However many workers end parts at once, one of them counts every part done, once.
extension PostgresQueue {
    /// The batches: each a job file fanned out over the parts of one job's feed.
    static let batchTable = Entity(name: "_batchrun_batch", columns: [
        Column(name: "id", type: .integer, isPrimaryKey: true),
        Column(name: "job", type: .text, notNull: true),
        Column(name: "name", type: .text, notNull: true),
        Column(name: "job_text", type: .text, notNull: true),
        Column(name: "params", type: .text, notNull: true, defaultLiteral: "'{}'"),
        Column(name: "directory", type: .text, notNull: true),
        Column(name: "priority", type: .integer, notNull: true, defaultLiteral: "0"),
        Column(name: "max_attempts", type: .integer, notNull: true, defaultLiteral: "1"),
        Column(name: "backoff", type: .real, notNull: true, defaultLiteral: "30"),
        Column(name: "item_group", type: .text),
        // The parts as listed at submit (`FeedPart` JSON, in name order), and how many.
        Column(name: "parts", type: .text, notNull: true),
        Column(name: "part_count", type: .integer, notNull: true),
        Column(name: "parts_queued", type: .boolean, notNull: true, defaultLiteral: "false"),
        Column(name: "has_completion", type: .boolean, notNull: true, defaultLiteral: "false"),
        // The completion's item, once queued.
        Column(name: "completion_item", type: .integer),
        Column(name: "submitted_at", type: .datetime, notNull: true, defaultLiteral: "CURRENT_TIMESTAMP"),
    ], primaryKey: ["id"])

    /// Queues a batch in one transaction: its row, then its needs item, or its parts when the
    /// job needs nothing. Its items are due when `submission` says.
    package func submitBatch(text: String, name: String, params: [String: String], directory: String, submission: QueueSubmission,
                             fanOut: FanOut, parts: [FeedPart]) throws -> QueueBatchSubmitted {
        let encodedParams = String(decoding: try JSONEncoder.sorted.encode(params), as: UTF8.self)
        let encodedParts = String(decoding: try JSONEncoder.sorted.encode(parts), as: UTF8.self)
        return try store.writeRecords { db in
            guard let id = try db.value("""
                INSERT INTO _batchrun_batch (job, name, job_text, params, directory, priority, max_attempts, backoff, parts, part_count, has_completion,
                    item_group, parts_queued)
                VALUES (?::text, ?::text, ?::text, ?::text, ?::text, ?::bigint, ?::bigint, ?::double precision, ?::text, ?::bigint, ?::int = 1,
                    ?::text, ?::int = 1)
                RETURNING id
                """, [.text(fanOut.job), .text(name), .text(text), .text(encodedParams), .text(directory), .integer(Int64(submission.priority)),
                      .integer(Int64(submission.attempts)), .real(submission.backoff), .text(encodedParts), .integer(Int64(parts.count)),
                      .integer(fanOut.completion.isEmpty ? 0 : 1),
                      submission.group.map(StoreValue.text) ?? .null, .integer(fanOut.needs.isEmpty ? 1 : 0)])?.int64 else { throw QueueBatchError.notQueued }
            let delay = submission.runAt.map { $0.timeIntervalSince(QueueClock.now()) } ?? submission.delay ?? 0
            // What a submit-only role may do: insert, never update (docs/postgresql.md).
            let first: [FanOutRole] = fanOut.needs.isEmpty ? parts.map { .part(job: fanOut.job, part: $0) } : [.needs(job: fanOut.job)]
            try queueItems(of: id, roles: first, delay: delay, in: db)
            _ = try db.value("SELECT pg_notify(?, '')", [.text(Self.channel)])
            return QueueBatchSubmitted(id: id, parts: parts.count)
        }
    }

    /// Inserts the batch's items for `roles`, in that order, from what its row holds, due in
    /// `delay` seconds; their ids.
    @discardableResult
    private func queueItems(of batch: Int64, roles: [FanOutRole], delay: Double = 0, in db: StoreConnection) throws -> [Int64] {
        let encoded = try roles.map { role in
            String(decoding: try JSONEncoder.sorted.encode(QueueBatchMembership(batch: batch, role: role)), as: UTF8.self)
        }
        let list = String(decoding: try JSONEncoder.sorted.encode(encoded), as: UTF8.self)
        return try db.rows("""
            INSERT INTO _batchrun_queue (name, job_text, params, directory, priority, run_at, state, max_attempts, backoff, batch, role, part,
                item_group)
            SELECT b.name, b.job_text, b.params, b.directory, b.priority, \(Self.now) + ?::double precision * interval '1 second',
                CASE WHEN ?::double precision > 0 THEN 'scheduled' ELSE 'pending' END, b.max_attempts, b.backoff, b.id, r.value,
                r.value::json -> 'role' -> 'part' -> 'part' ->> 'name', b.item_group
            FROM _batchrun_batch AS b, json_array_elements_text(?::json) WITH ORDINALITY AS r(value, n)
            WHERE b.id = ?
            ORDER BY r.n
            RETURNING id
            """, [.real(delay), .real(delay), .text(list), .integer(batch)]).compactMap { $0.first?.int64 }
    }

    /// Queues an item per part of the batch, once.
    private func queueParts(of batch: Int64, in db: StoreConnection) throws {
        guard let row = try db.namedRows("SELECT job, parts FROM _batchrun_batch WHERE id = ? AND NOT parts_queued",
                                         [.integer(batch)]).first,
              let job = row["job"].string,
              let parts = try? JSONDecoder().decode([FeedPart].self, from: Data((row["parts"].string ?? "[]").utf8)) else { return }
        try queueItems(of: batch, roles: parts.map { .part(job: job, part: $0) }, in: db)
        try db.execute("UPDATE _batchrun_batch SET parts_queued = true WHERE id = ?", [.integer(batch)])
    }

    /// After item `id` of `batch` ended done, in the transaction that ended it: what it waited
    /// for is queued. The batch's row is locked first, so the workers that end its items at the
    /// same moment come here one after another, each seeing what the ones before committed.
    ///
    /// Only what the batch itself queued counts: an item is the batch's when its text, params and
    /// folder are the batch's and its role names the batch (and, for a part, the part its `part`
    /// column says). A submitter may insert rows that claim a batch (docs/postgresql.md); such a
    /// row that copies the batch exactly only does the batch's own work again, anything else is
    /// ignored here.
    func advance(batch: Int64, item id: Int64, role: String?, in db: StoreConnection) throws {
        guard let membership = role.flatMap({ try? JSONDecoder().decode(QueueBatchMembership.self, from: Data($0.utf8)) }),
              membership.batch == batch,
              let row = try db.namedRows("""
                SELECT b.job, b.parts_queued, b.has_completion, b.completion_item, b.part_count FROM _batchrun_batch AS b
                WHERE b.id = ? AND EXISTS (SELECT 1 FROM _batchrun_queue AS q WHERE q.id = ? AND \(Self.ofTheBatch))
                FOR UPDATE OF b
                """, [.integer(batch), .integer(id)]).first, row["job"].string == membership.role.job else { return }
        switch membership.role {
        case .needs:
            if row["parts_queued"].bool != true { try queueParts(of: batch, in: db) }
        case .part:
            // The batch's parts are read once, as an array (an uncorrelated `ARRAY(...)`): read
            // in the `WHERE` for each done item, the whole list was parsed again for every one of
            // them, 20 ms a part's end at 200 parts (2 ms now), under the batch's lock.
            guard row["has_completion"].bool == true, row["completion_item"].int64 == nil,
                  let done = try db.value("""
                    SELECT count(DISTINCT q.part) FROM _batchrun_queue AS q, _batchrun_batch AS b
                    WHERE b.id = ? AND q.batch = b.id AND q.state = 'done' AND \(Self.ofTheBatch)
                        AND q.part = q.role::json -> 'role' -> 'part' -> 'part' ->> 'name'
                        AND q.role::json -> 'role' -> 'part' ->> 'job' = b.job
                        AND q.part = ANY (ARRAY(SELECT p ->> 'name' FROM _batchrun_batch AS listed,
                                                  json_array_elements(listed.parts::json) AS p WHERE listed.id = ?))
                    """, [.integer(batch), .integer(batch)])?.int64,
                  done >= row["part_count"].int64 ?? Int64.max,
                  let job = row["job"].string else { return }
            let queued = try queueItems(of: batch, roles: [.completion(job: job)], in: db)
            try db.execute("UPDATE _batchrun_batch SET completion_item = ? WHERE id = ?", [queued.first.map(StoreValue.integer) ?? .null, .integer(batch)])
            _ = try db.value("SELECT pg_notify(?, '')", [.text(Self.channel)])
        case .completion:
            return
        }
    }

    /// An item `q` that is batch `b`'s own: its text, params and folder, and a role naming it.
    static let ofTheBatch = "q.job_text = b.job_text AND q.params = b.params AND q.directory = b.directory AND (q.role::json ->> 'batch')::bigint = b.id"

    /// Every batch, oldest first: its parts by state (`waiting` until queued), the rows its
    /// parts wrote (done ones from their runs' reports, running ones as far as they published),
    /// and its completion.
    package func batches() throws -> [QueueBatch] {
        try store.readRecords { db in
            let states = try db.namedRows("""
                SELECT batch, state, count(*) AS n, sum(coalesce(rows, 0)) AS done_rows,
                    sum(CASE WHEN state = 'running' THEN coalesce((progress::json ->> 'rows')::bigint, 0) ELSE 0 END) AS running_rows
                FROM _batchrun_queue WHERE batch IS NOT NULL AND part IS NOT NULL GROUP BY batch, state
                """, [])
            var parts: [Int64: [String: Int]] = [:], rows: [Int64: Int] = [:]
            for row in states {
                guard let batch = row["batch"].int64, let state = row["state"].string else { continue }
                parts[batch, default: [:]][state] = row["n"].int ?? 0
                rows[batch, default: 0] += (row["done_rows"].int ?? 0) + (row["running_rows"].int ?? 0)
            }
            return try db.namedRows("""
                SELECT b.id, b.job, b.part_count, b.parts_queued, b.has_completion, b.completion_item, q.state AS completion_state
                FROM _batchrun_batch AS b LEFT JOIN _batchrun_queue AS q ON q.id = b.completion_item ORDER BY b.id
                """, []).map { row in
                let id = row["id"].int64 ?? 0
                var counts = parts[id] ?? [:]
                if row["parts_queued"].bool != true { counts[QueueBatch.waiting] = row["part_count"].int ?? 0 }
                let completion = row["has_completion"].bool == true
                    ? QueueBatch.Completion(id: row["completion_item"].int64.map { String($0) },
                                            state: row["completion_state"].string ?? QueueBatch.waiting) : nil
                return QueueBatch(id: id, job: row["job"].string ?? "", parts: counts, rows: rows[id] ?? 0, completion: completion)
            }
        }
    }
}
#endif
