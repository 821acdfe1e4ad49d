#if PostgreSQL
import Foundation

/// A queue in a PostgreSQL database, for workers on any number of machines: items (job files
/// with their params) in the `_batchrun_queue` table, claimed with `FOR UPDATE SKIP LOCKED`,
/// held by a lease the worker renews, and fenced: every claim gives the item a new token, and
/// a run started for a claim commits only while the token is still the item's (`fence(item:token:idleTimeout:)`),
/// so a worker that lost its lease (paused, cut off) cannot commit again.
///
/// ```swift
/// let queue = try PostgresQueue(url: "postgresql://batch@db.internal/nightly")
/// let id = try queue.submit(text: jobText, name: "nightly.yaml", params: [:], directory: "/srv/nightly/jobs")
/// if let claim = try queue.claimNext(worker: "4121@etl-1", lease: 30) { print(claim.id, claim.token) }
/// ```
package final class PostgresQueue: Sendable {
    /// The table the items are in.
    static let table = Entity(name: "_batchrun_queue", columns: [
        Column(name: "id", type: .integer, isPrimaryKey: true),
        Column(name: "name", type: .text, notNull: true),
        Column(name: "job_text", type: .text, notNull: true),
        Column(name: "params", type: .text, notNull: true, defaultLiteral: "'{}'"),
        Column(name: "directory", type: .text, notNull: true),
        Column(name: "state", type: .text, notNull: true, defaultLiteral: "'pending'"),
        Column(name: "token", type: .integer, notNull: true, defaultLiteral: "0"),
        Column(name: "worker", type: .text),
        Column(name: "lease_until", type: .datetime),
        Column(name: "attempts", type: .integer, notNull: true, defaultLiteral: "0"),
        Column(name: "submitted_at", type: .datetime, notNull: true, defaultLiteral: "CURRENT_TIMESTAMP"),
        Column(name: "started_at", type: .datetime),
        Column(name: "ended_at", type: .datetime),
        Column(name: "status", type: .integer),
        Column(name: "report", type: .text),
        Column(name: "log", type: .text, notNull: true, defaultLiteral: "''"),
        Column(name: "error", type: .text),
    ], primaryKey: ["id"], indexes: [["state", "id"]])

    /// The channel `submit` notifies, so idle workers wake at once.
    static let channel = "batchrun_queue"

    let store: Store

    /// The queue's database, as the URL names it (no password).
    package var location: String { store.path }

    /// Opens the queue, creating its table when missing.
    package init(url: String) throws {
        store = try Store(postgres: url, model: Model(entities: [Self.table]))
    }

    /// True when `spec` is the database of the queue at `queue` (its URL or location): a run of
    /// an item there can be fenced.
    package static func holds(_ spec: StoreSpec, queue: String) -> Bool {
        spec.kind == .postgres && (try? PostgresLocation(url: spec.path).description) == (try? PostgresLocation(url: queue).description)
    }

    // MARK: Submitting

    /// Queues a job file's text, its params and the folder its relative paths resolve against;
    /// wakes idle workers. Returns the item's id.
    @discardableResult
    package func submit(text: String, name: String, params: [String: String], directory: String) throws -> Int64 {
        let encoded = String(decoding: try JSONEncoder.sorted.encode(params), as: UTF8.self)
        return try store.writeRecords { db in
            let id = try db.value("INSERT INTO _batchrun_queue (name, job_text, params, directory) VALUES (?, ?, ?, ?) RETURNING id",
                                  [.text(name), .text(text), .text(encoded), .text(directory)])
            _ = try db.value("SELECT pg_notify(?, '')", [.text(Self.channel)])
            return id?.int64 ?? 0
        }
    }

    // MARK: Claiming

    /// An item a worker holds until its lease runs out: `token` fences its run.
    package struct Claim: Sendable {
        package let id: Int64
        package let token: Int64
        package let name: String
        package let text: String
        package let params: [String: String]
        package let directory: String
        /// True when the item was taken over from a worker whose lease ran out.
        package let takenOver: Bool
    }

    /// Claims the first item that is pending or whose lease ran out (taken over), for `lease`
    /// seconds; nil when there is none. Items another worker is claiming at this moment are
    /// skipped, never waited for.
    package func claimNext(worker: String, lease: Double) throws -> Claim? {
        try store.writeRecords { db in
            guard let row = try db.namedRows("""
                WITH next AS (
                    SELECT id, state FROM _batchrun_queue
                    WHERE state = 'pending' OR (state = 'running' AND lease_until < clock_timestamp())
                    ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
                UPDATE _batchrun_queue AS q SET state = 'running', token = q.token + 1, worker = ?,
                    lease_until = clock_timestamp() + ? * interval '1 millisecond', attempts = q.attempts + 1,
                    started_at = coalesce(q.started_at, clock_timestamp())
                FROM next WHERE q.id = next.id
                RETURNING q.id, q.token, q.name, q.job_text, q.params, q.directory, next.state = 'running' AS taken_over
                """, [.text(worker), .integer(Int64((lease * 1000).rounded()))]).first else { return nil }
            let params = (row["params"].string).flatMap { try? JSONDecoder().decode([String: String].self, from: Data($0.utf8)) }
            return Claim(id: row["id"].int64 ?? 0, token: row["token"].int64 ?? 0, name: row["name"].string ?? "",
                         text: row["job_text"].string ?? "", params: params ?? [:], directory: row["directory"].string ?? "",
                         takenOver: row["taken_over"].bool == true)
        }
    }

    /// Extends a claim's lease; false when the claim was lost (its lease ran out and another
    /// worker took the item).
    package func renew(_ claim: Claim, lease: Double) throws -> Bool {
        try store.writeRecords { db in
            try db.execute("""
                UPDATE _batchrun_queue SET lease_until = clock_timestamp() + ? * interval '1 millisecond'
                WHERE id = ? AND token = ? AND state = 'running'
                """, [.integer(Int64((lease * 1000).rounded())), .integer(claim.id), .integer(claim.token)]) == 1
        }
    }

    /// The fence of the run of item `id` claimed with `token`: each of its write transactions
    /// commits only while the token is still the item's (checked as its last statement, with a
    /// key-share lock, so a takeover either comes before the check and fails it, or waits for
    /// the commit). `idleTimeout` ends a transaction of a paused run, so the rows it locked are
    /// free for the worker that takes the item over.
    package static func fence(item id: Int64, token: Int64, idleTimeout: Double) -> WriteFence {
        WriteFence(sql: "SELECT 1 FROM _batchrun_queue WHERE id = ? AND token = ? AND state = 'running' FOR KEY SHARE",
                   arguments: [.integer(id), .integer(token)],
                   refusal: "lost the lease of queue item \(id): another worker took it over", idleTimeout: idleTimeout)
    }

    /// Ends a claim: `done` or `failed` with the run's exit status, report and log (appended to
    /// the logs of earlier attempts), or back to `pending` (the log kept for its next attempt).
    /// False when the claim was lost: another worker has the item, and nothing is changed.
    /// `whileHeld` runs when the claim was still held, before the item can be claimed again (its
    /// row stays locked until the end is committed): a worker removes the item's files there, so
    /// a worker on the same machine that claims it next cannot have its new copy removed.
    ///
    /// ```swift
    /// let ended = try queue.finish(claim, as: .done, status: 0, report: json, log: output, error: nil) {
    ///     try? FileManager.default.removeItem(atPath: copy)
    /// }
    /// ```
    package func finish(_ claim: Claim, as state: QueueItemState, status: Int32?, report: String?, log: String, error: String?,
                       whileHeld: () -> Void = {}) throws -> Bool {
        // A server that went away (a restart, a failover) is waited for, up to the store's
        // `reconnect`: the item's outcome must not be lost with the connection.
        var reconnection = Reconnection(window: store.reconnectWindow)
        return try reconnection.run { try store.writeRecords { db in
            let held = try db.execute("""
                UPDATE _batchrun_queue SET state = ?, status = ?, report = coalesce(?, report), log = log || ?, error = ?,
                    ended_at = CASE WHEN ? = 'pending' THEN NULL ELSE clock_timestamp() END, worker = NULL, lease_until = NULL
                WHERE id = ? AND token = ? AND state = 'running'
                """, [.text(state.rawValue), status.map { .integer(Int64($0)) } ?? .null, report.map(StoreValue.text) ?? .null,
                      .text(log), error.map(StoreValue.text) ?? .null, .text(state.rawValue), .integer(claim.id), .integer(claim.token)]) == 1
            if held { whileHeld() }
            return held
        } }
    }

    // MARK: Waiting

    /// Calls `wake` whenever an item is submitted (PostgreSQL's `LISTEN`), from another thread.
    package func onSubmit(_ wake: @escaping @Sendable () -> Void) throws {
        try store.listen(channel: Self.channel, wake)
    }

    // MARK: Listing

    /// One item as `batchrun queue` lists it.
    package struct Item: Sendable, Codable {
        package var id: Int64
        package var name: String
        package var state: QueueItemState
        package var worker: String?
        /// Seconds until the lease runs out (negative: it ran out; the next claim takes it over).
        package var leaseLeft: Double?
        package var attempts: Int
        package var submittedAt: String
        package var endedAt: String?
        package var status: Int?
        package var error: String?

        enum CodingKeys: String, CodingKey {
            case id, name, state, worker, attempts, status, error
            case leaseLeft = "lease_left_s", submittedAt = "submitted_at", endedAt = "ended_at"
        }
    }

    /// Every item in submission order.
    package func items() throws -> [Item] {
        try store.readRecords { db in
            try db.namedRows("""
                SELECT id, name, state, worker, extract(epoch FROM lease_until - clock_timestamp()) AS lease_left, attempts,
                    submitted_at, ended_at, status, error
                FROM _batchrun_queue ORDER BY id
                """, []).map { row in
                Item(id: row["id"].int64 ?? 0, name: row["name"].string ?? "", state: QueueItemState(rawValue: row["state"].string ?? "") ?? .pending,
                     worker: row["worker"].string, leaseLeft: row["lease_left"].double, attempts: row["attempts"].int ?? 0,
                     submittedAt: row["submitted_at"].string ?? "", endedAt: row["ended_at"].string, status: row["status"].int,
                     error: row["error"].string)
            }
        }
    }

    /// An item's report (JSON) and log, as its runs left them.
    package func output(of id: Int64) throws -> (report: String?, log: String)? {
        try store.readRecords { db in
            try db.namedRows("SELECT report, log FROM _batchrun_queue WHERE id = ?", [.integer(id)]).first.map {
                ($0["report"].string, $0["log"].string ?? "")
            }
        }
    }
}
#endif
