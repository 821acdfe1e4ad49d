#if PostgreSQL
import BatchRunStore
import BatchRunContext
import BatchRunEngine
import BatchRunPostgres
import Foundation

/// A queue in a PostgreSQL database, for workers on any number of machines: items (job files
/// with their params) in the `_batchrun_queue` table, claimed with `FOR UPDATE SKIP LOCKED`,
/// held by a lease the worker renews, and fenced: every claim gives the item a new token, and
/// a run started for a claim commits only while the token is still the item's (`fence(item:token:)`),
/// so a worker that lost its lease (paused, cut off) cannot commit again.
///
/// ```swift
/// let queue = try PostgresQueue(url: "postgresql://batch@db.internal/nightly")
/// let id = try queue.submit(text: jobText, name: "nightly.yaml", params: [:], directory: "/srv/nightly/jobs")
/// if let claim = try queue.claimNext(worker: "4121@etl-1", lease: 30) { print(claim.id, claim.token) }
/// ```
package final class PostgresQueue: Sendable {
    /// The table the items are in.
    package static let table = Entity(name: "_batchrun_queue", columns: [
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
        Column(name: "priority", type: .integer, notNull: true, defaultLiteral: "0"),
        Column(name: "run_at", type: .datetime, notNull: true, defaultLiteral: "CURRENT_TIMESTAMP"),
        Column(name: "max_attempts", type: .integer, notNull: true, defaultLiteral: "1"),
        Column(name: "backoff", type: .real, notNull: true, defaultLiteral: "30"),
        Column(name: "failures", type: .integer, notNull: true, defaultLiteral: "0"),
        Column(name: "unique_key", type: .text),
        Column(name: "cancel_requested", type: .boolean, notNull: true, defaultLiteral: "false"),
        Column(name: "schedule", type: .text),
        Column(name: "scheduled_for", type: .datetime),
        // A running item's progress (`ItemProgress` JSON), written by its run while it holds the claim.
        Column(name: "progress", type: .text),
        // An item of a fan-out batch (JOBFILE.md 17): the batch, what it runs of the job file
        // (`QueueBatchMembership` JSON), the part it reads (for a part), and the rows its run wrote.
        Column(name: "batch", type: .integer),
        Column(name: "role", type: .text),
        Column(name: "part", type: .text),
        Column(name: "rows", type: .integer),
        // The group `submit --group` put it in, which `batchrun limit` may limit.
        Column(name: "item_group", type: .text),
    ], primaryKey: ["id"], indexes: [["state", "id"], ["batch", "state"], ["item_group", "state"]])

    /// The schedules (`batchrun schedule`): each a job file with its params and cron line.
    static let scheduleTable = Entity(name: "_batchrun_schedule", columns: [
        Column(name: "name", type: .text, isPrimaryKey: true),
        Column(name: "job_text", type: .text, notNull: true),
        Column(name: "params", type: .text, notNull: true, defaultLiteral: "'{}'"),
        Column(name: "directory", type: .text, notNull: true),
        Column(name: "cron", type: .text, notNull: true),
        Column(name: "tz", type: .text, notNull: true),
        Column(name: "created_at", type: .real, notNull: true),
    ], primaryKey: ["name"])

    /// The indexes the entity model cannot say: the waiting items in claim order, and the unique
    /// key of waiting and running items (`submit --unique`: a duplicate is refused by the index,
    /// never found by a read first).
    static let partialIndexes = [
        ("_batchrun_queue_next", "CREATE INDEX _batchrun_queue_next ON _batchrun_queue (priority DESC, run_at, id) "
            + "WHERE state IN ('pending', 'scheduled', 'retryable')"),
        ("_batchrun_queue_unique", "CREATE UNIQUE INDEX _batchrun_queue_unique ON _batchrun_queue (unique_key) "
            + "WHERE unique_key IS NOT NULL AND state IN ('pending', 'scheduled', 'retryable', 'running')"),
        ("_batchrun_queue_schedule", "CREATE UNIQUE INDEX _batchrun_queue_schedule ON _batchrun_queue (schedule, scheduled_for) "
            + "WHERE schedule IS NOT NULL"),
    ]

    /// What every row must hold, whoever wrote it: a submit role, which may insert only the
    /// submission's columns (docs/postgresql.md), cannot forge a finished or running item (it
    /// may not set `ended_at` or `worker`) nor step outside the ranges `submit` takes. Added `NOT
    /// VALID` (rows from before are not checked) by a role that may.
    static let checks = [
        ("_batchrun_queue_state", "state IN ('pending', 'scheduled', 'retryable', 'running', 'done', 'failed', 'cancelled')"),
        ("_batchrun_queue_ended", "state NOT IN ('done', 'failed', 'cancelled') OR ended_at IS NOT NULL"),
        ("_batchrun_queue_running", "state <> 'running' OR worker IS NOT NULL"),
        ("_batchrun_queue_priority", "priority BETWEEN \(QueueSubmission.priorities.lowerBound) AND \(QueueSubmission.priorities.upperBound)"),
        ("_batchrun_queue_attempts", "max_attempts BETWEEN \(QueueSubmission.attemptRange.lowerBound) AND \(QueueSubmission.attemptRange.upperBound)"),
        ("_batchrun_queue_backoff", "backoff BETWEEN 0 AND \(Int(QueueSubmission.longestBackoff))"),
        // A batch item's role is JSON naming its batch by number: what `advance` reads of it cannot fail.
        ("_batchrun_queue_role", "role IS NULL OR (role::json ->> 'batch')::bigint IS NOT NULL"),
    ]

    /// The columns a submit-only role may insert (its column `GRANT`, docs/postgresql.md).
    package static let submissionColumns = ["name", "job_text", "params", "directory", "priority", "run_at", "state",
                                            "max_attempts", "backoff", "unique_key", "item_group"]

    /// A unique submission's insert: nothing when the unique index finds the same item waiting or running.
    static let onDuplicate = "ON CONFLICT (unique_key) WHERE unique_key IS NOT NULL AND state IN ('pending', 'scheduled', 'retryable', 'running') DO NOTHING"

    /// `now` as the queue compares due times with it: the server's clock, moved by the
    /// test-only `QueueClock.offset`.
    package static var now: String { QueueClock.postgresNow }

    /// The channel `submit` notifies, so idle workers wake at once.
    package static let channel = "batchrun_queue"

    package let store: Store

    /// How long a transaction of the queue's own may stay idle (`init(url:idleTimeout:)`): each
    /// is a few statements the process sends without waiting for anything but the server (an
    /// item's end also removes its scratch files), so one idle this long belongs to a paused or
    /// stuck process. Its session is then gone; the next statement makes a new one.
    package static let idleTimeout = 10.0

    /// Where this process keeps its claimed items' logs and reports while they run (made on
    /// the first claim; private to it).
    let scratch = ScratchFolder(prefix: "batchrun-worker")

    /// The queue's database, as the URL names it (no password).
    package var location: String { store.path }

    /// Opens the queue, creating its table when missing; a table an earlier batchrun made gains
    /// the columns it lacks (with their defaults) as any store's tables do (JOBFILE.md 13).
    /// `idleTimeout`: the server ends a transaction of this process's left idle that long
    /// (`StoreSpec.idleTimeout`), so a worker or runner paused while it wrote an item's row
    /// (its lease, its progress) cannot keep another worker from taking the item over.
    package init(url: String, idleTimeout: Double = PostgresQueue.idleTimeout) throws {
        var spec = StoreSpec(kind: .postgres, path: url)
        spec.idleTimeout = idleTimeout
        store = try Store(spec, model: Model(entities: [Self.table, Self.scheduleTable, Self.batchTable, Self.groupTable, Self.groupStartTable, Self.pauseTable, Self.auditTable]))
        try createPartialIndexesAndChecks()
    }

    /// Creates the partial indexes and the checks when missing (a role that may not create
    /// them, a submit-only one, uses the table as it is).
    private func createPartialIndexesAndChecks() throws {
        let present = try store.readRecords { db in
            try db.namedRows("""
                SELECT indexname AS name FROM pg_indexes WHERE tablename = '_batchrun_queue'
                UNION ALL SELECT conname FROM pg_constraint WHERE conrelid = '_batchrun_queue'::regclass
                """, []).compactMap { $0["name"].string }
        }
        let missing = Self.partialIndexes.filter { !present.contains($0.0) }
            + Self.checks.filter { !present.contains($0.0) }.map { name, check in
                (name, "ALTER TABLE _batchrun_queue ADD CONSTRAINT \(name) CHECK (\(check)) NOT VALID")
            }
        for (name, sql) in missing {
            // A role that may not create them leaves them to a worker's role; another worker
            // may have made one at the same moment. A `NOT VALID` check still holds every
            // UPDATE, so rows an older `submit` allowed (any attempts or backoff) are brought
            // into range first: else their claim would fail, again and again.
            try? store.writeRecords { db in
                if name == "_batchrun_queue_attempts" {
                    _ = try db.execute("UPDATE _batchrun_queue SET max_attempts = \(QueueSubmission.attemptRange.upperBound) "
                                       + "WHERE max_attempts > \(QueueSubmission.attemptRange.upperBound)", [])
                }
                if name == "_batchrun_queue_backoff" {
                    _ = try db.execute("UPDATE _batchrun_queue SET backoff = \(Int(QueueSubmission.longestBackoff)) "
                                       + "WHERE backoff > \(Int(QueueSubmission.longestBackoff))", [])
                }
                _ = try db.execute(sql, [])
            }
        }
    }

    /// True when `spec` is the database of the queue at `queue` (its URL or location): a run of
    /// an item there can be fenced.
    package static func holds(_ spec: StoreSpec, queue: String) -> Bool {
        spec.kind == .postgres && (try? PostgresLocation(url: spec.path).description) == (try? PostgresLocation(url: queue).description)
    }

    // MARK: Submitting

    /// Queues a job file's text, its params and the folder its relative paths resolve against,
    /// as `submission` says; wakes idle workers. Returns the item's id, and whether it was
    /// there already (a unique submission that found the same item waiting or running).
    @discardableResult
    package func submit(text: String, name: String, params: [String: String], directory: String,
                        submission: QueueSubmission = QueueSubmission()) throws -> (id: Int64, existing: Bool) {
        let encoded = String(decoding: try JSONEncoder.sorted.encode(params), as: UTF8.self)
        return try store.writeRecords { db in
            // Parameters are untyped text to the server: each is cast where its type matters.
            let inserted = try db.value("""
                WITH due AS (SELECT CASE WHEN ?::int = 1 THEN to_timestamp(?::double precision)
                                         ELSE \(Self.now) + ?::double precision * interval '1 second' END AS at)
                INSERT INTO _batchrun_queue (name, job_text, params, directory, priority, run_at, state, max_attempts, backoff, unique_key, item_group)
                SELECT ?::text, ?::text, ?::text, ?::text, ?::bigint, due.at,
                    CASE WHEN due.at > \(Self.now) THEN 'scheduled' ELSE 'pending' END, ?::bigint, ?::double precision,
                    CASE WHEN ?::int = 1 THEN md5(?::text || chr(1) || ?::text) END, ?::text
                FROM due
                \(submission.unique ? Self.onDuplicate : "") RETURNING id
                """, [.integer(submission.runAt == nil ? 0 : 1), .real(submission.runAt?.timeIntervalSince1970 ?? 0), .real(submission.delay ?? 0),
                      .text(name), .text(text), .text(encoded), .text(directory), .integer(Int64(submission.priority)),
                      .integer(Int64(submission.attempts)), .real(submission.backoff), .integer(submission.unique ? 1 : 0), .text(text), .text(encoded),
                      submission.group.map(StoreValue.text) ?? .null])
            if let id = inserted?.int64 {
                _ = try db.value("SELECT pg_notify(?, '')", [.text(Self.channel)])
                return (id, false)
            }
            let existing = try db.value("""
                SELECT id FROM _batchrun_queue WHERE unique_key = md5(?::text || chr(1) || ?::text)
                    AND state IN ('pending', 'scheduled', 'retryable', 'running')
                """, [.text(text), .text(encoded)])
            return (existing?.int64 ?? 0, true)
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
        /// An item of a fan-out batch: the batch and what the item runs.
        package var membership: QueueBatchMembership?
        /// Earlier attempts that ended failed; how many it may have; the backoff before the next.
        package var failures = 0
        package var attempts = 1
        package var backoff: Double = 30
    }

    /// Claims an item whose lease ran out (taken over), else the first waiting item that is
    /// due (highest priority, then earliest due, then first submitted), for `lease` seconds;
    /// nil when there is none. Items another worker is claiming at this moment are skipped,
    /// never waited for.
    package func claimNext(worker: String, lease: Double) throws -> Claim? {
        try store.writeRecords { db in
            // `batchrun pause`: nothing is claimed, not even an item to take over; a paused group's items wait.
            let paused = try pause(in: db)
            if paused.queue { return nil }
            if let taken = try take(next: """
                SELECT id, state FROM _batchrun_queue WHERE state = 'running' AND lease_until < clock_timestamp()
                ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED
                """, [], worker: worker, lease: lease, in: db) { return taken }
            // A due item of a group at one of its limits is passed over (`batchrun limit`).
            var blocked = try groupsAtLimit(in: db) + paused.groups
            while true {
                let list = String(decoding: try JSONEncoder().encode(blocked), as: UTF8.self)
                guard let row = try db.namedRows("""
                    SELECT id, item_group FROM _batchrun_queue WHERE state IN ('pending', 'scheduled', 'retryable') AND run_at <= \(Self.now)
                        AND (item_group IS NULL OR item_group NOT IN (SELECT json_array_elements_text(?::json)))
                    ORDER BY priority DESC, run_at, id LIMIT 1 FOR UPDATE SKIP LOCKED
                    """, [.text(list)]).first, let id = row["id"].int64 else { return nil }
                if let group = row["item_group"].string, try !admitsStart(of: group, in: db) {
                    blocked.append(group)
                    continue
                }
                return try take(next: "SELECT id, state FROM _batchrun_queue WHERE id = ?", [.integer(id)], worker: worker, lease: lease, in: db)
            }
        }
    }

    /// Claims the item `next` selects (`id`, `state`; locked), for `worker` and `lease` seconds.
    private func take(next: String, _ arguments: [StoreValue], worker: String, lease: Double, in db: StoreConnection) throws -> Claim? {
        guard let row = try db.namedRows("""
            WITH next AS (\(next))
            UPDATE _batchrun_queue AS q SET state = 'running', token = q.token + 1, worker = ?,
                lease_until = clock_timestamp() + ? * interval '1 millisecond', attempts = q.attempts + 1,
                started_at = coalesce(q.started_at, clock_timestamp()), cancel_requested = q.cancel_requested AND next.state = 'running',
                progress = NULL
            FROM next WHERE q.id = next.id
            RETURNING q.id, q.token, q.name, q.job_text, q.params, q.directory, next.state = 'running' AS taken_over,
                q.failures, q.max_attempts, q.backoff, q.role
            """, SQLArguments(arguments + [.text(worker), .integer(Int64((lease * 1000).rounded()))])).first else { return nil }
        let params = (row["params"].string).flatMap { try? JSONDecoder().decode([String: String].self, from: Data($0.utf8)) }
        var claim = Claim(id: row["id"].int64 ?? 0, token: row["token"].int64 ?? 0, name: row["name"].string ?? "",
                          text: row["job_text"].string ?? "", params: params ?? [:], directory: row["directory"].string ?? "",
                          takenOver: row["taken_over"].bool == true)
        claim.failures = row["failures"].int ?? 0
        claim.attempts = row["max_attempts"].int ?? 1
        claim.backoff = row["backoff"].double ?? 30
        claim.membership = row["role"].string.flatMap { try? JSONDecoder().decode(QueueBatchMembership.self, from: Data($0.utf8)) }
        return claim
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
    /// the commit). The run's store also ends a transaction left idle past the lease
    /// (`StoreSpec.idleTimeout`: `QueueFence`), so the rows a paused run locked are
    /// free for the worker that takes the item over.
    package static func fence(item id: Int64, token: Int64) -> WriteFence {
        WriteFence(sql: "SELECT 1 FROM _batchrun_queue WHERE id = ? AND token = ? AND state = 'running' FOR KEY SHARE",
                   arguments: [.integer(id), .integer(token)],
                   refusal: "lost the lease of queue item \(id): another worker took it over")
    }

    /// Ends a claim: `done`, `failed` or `cancelled` with the run's exit status, report and log
    /// (appended to the logs of earlier attempts); `retryable`, due again in `retryIn` seconds
    /// (its log kept, its failures counted); or back to `pending` (the log kept for its next
    /// attempt). False when the claim was lost: another worker has the item, and nothing is
    /// changed. `whileHeld` runs when the claim was still held, before the item can be claimed
    /// again (its row stays locked until the end is committed): a worker removes the item's
    /// files there, so a worker on the same machine that claims it next cannot have its new
    /// copy removed.
    ///
    /// ```swift
    /// let ended = try queue.finish(claim, as: .done, status: 0, report: json, log: output, error: nil) {
    ///     try? FileManager.default.removeItem(atPath: copy)
    /// }
    /// ```
    package func finish(_ claim: Claim, as state: QueueItemState, status: Int32?, report: String?, log: String, error: String?,
                        retryIn: Double = 0, whileHeld: () -> Void = {}) throws -> Bool {
        let rows = report.flatMap { try? RunReport(jsonData: Data($0.utf8)) }?.rowsWritten
        // A server that went away (a restart, a failover) is waited for, up to the store's
        // `reconnect`: the item's outcome must not be lost with the connection.
        var reconnection = Reconnection(window: store.reconnectWindow)
        return try reconnection.run { try store.writeRecords { db in
            let ended = try db.rows("""
                UPDATE _batchrun_queue SET state = ?, status = ?, report = coalesce(?, report), log = log || ?, error = ?, rows = ?,
                    ended_at = CASE WHEN ? IN ('pending', 'retryable') THEN NULL ELSE clock_timestamp() END, worker = NULL, lease_until = NULL,
                    progress = NULL,
                    failures = failures + CASE WHEN ? = 'retryable' THEN 1 ELSE 0 END,
                    run_at = CASE WHEN ? = 'retryable' THEN \(Self.now) + ?::double precision * interval '1 second' ELSE run_at END
                WHERE id = ? AND token = ? AND state = 'running'
                RETURNING batch, role
                """, [.text(state.rawValue), status.map { .integer(Int64($0)) } ?? .null, report.map(StoreValue.text) ?? .null,
                      .text(log), error.map(StoreValue.text) ?? .null, rows.map { .integer(Int64($0)) } ?? .null,
                      .text(state.rawValue), .text(state.rawValue), .text(state.rawValue),
                      .real(retryIn), .integer(claim.id), .integer(claim.token)])
            guard let row = ended.first else { return false }
            // What a batch waits for is queued in this transaction, or not at all.
            if state == .done, let batch = row.first?.int64 { try advance(batch: batch, item: claim.id, role: row.dropFirst().first?.string, in: db) }
            whileHeld()
            return true
        } }
    }

    /// Publishes how far the run of item `id` claimed with `token` is (`progress`, JSON), as the
    /// run's fence would commit: only while the token is still the item's and its lease has not
    /// run out. False when the claim is no longer held (nothing is written).
    package func publishProgress(_ progress: String, item id: Int64, token: Int64) throws -> Bool {
        try store.writeRecords { db in
            try db.execute("""
                UPDATE _batchrun_queue SET progress = ?
                WHERE id = ? AND token = ? AND state = 'running' AND lease_until > clock_timestamp()
                """, [.text(progress), .integer(id), .integer(token)]) == 1
        }
    }

    // MARK: Cancelling

    /// Cancels item `id`: a waiting one ends `cancelled`; a running one is marked, and its
    /// worker cancels its run (it looks every second).
    package func cancel(id: Int64) throws -> QueueCancellation {
        try store.writeRecords { db in
            if try db.execute("""
                UPDATE _batchrun_queue SET state = 'cancelled', ended_at = clock_timestamp()
                WHERE id = ? AND state IN ('pending', 'scheduled', 'retryable')
                """, [.integer(id)]) == 1 { return .cancelled }
            if try db.execute("UPDATE _batchrun_queue SET cancel_requested = true WHERE id = ? AND state = 'running'", [.integer(id)]) == 1 {
                return .requested
            }
            guard let state = try db.value("SELECT state FROM _batchrun_queue WHERE id = ?", [.integer(id)])?.string else { return .notFound }
            return .ended(QueueItemState(rawValue: state) ?? .failed)
        }
    }

    /// Puts item `id` back to pending when it ended failed or cancelled: its status, error and
    /// failures cleared, due now; its log and report kept until its next run ends. Wakes idle workers.
    package func retry(id: Int64) throws -> QueueRetry {
        try store.writeRecords { db in
            if try db.execute("""
                UPDATE _batchrun_queue SET state = 'pending', status = NULL, error = NULL, ended_at = NULL, failures = 0,
                    cancel_requested = false, run_at = \(Self.now)
                WHERE id = ? AND state IN ('failed', 'cancelled')
                """, [.integer(id)]) == 1 {
                _ = try db.value("SELECT pg_notify(?, '')", [.text(Self.channel)])
                return .retried
            }
            guard let state = try db.value("SELECT state FROM _batchrun_queue WHERE id = ?", [.integer(id)])?.string else { return .notFound }
            return .refused(QueueItemState(rawValue: state) ?? .pending)
        }
    }

    /// True when `cancel` marked the claimed item.
    package func isCancelRequested(_ claim: Claim) throws -> Bool {
        try store.readRecords { db in
            try db.value("SELECT 1 FROM _batchrun_queue WHERE id = ? AND token = ? AND cancel_requested", [.integer(claim.id), .integer(claim.token)]) != nil
        }
    }

    // MARK: Waiting

    /// Calls `wake` whenever an item is submitted (PostgreSQL's `LISTEN`), from another thread.
    package func onSubmit(_ wake: @escaping @Sendable () -> Void) throws {
        try store.listen(channel: Self.channel, wake)
    }

    // MARK: Listing

    /// Every item in submission order, as a snapshot lists it; with `filter` (`WHERE ...`), those it keeps.
    package func items(where filter: String = "") throws -> [QueueSnapshot.Item] {
        try store.readRecords { db in
            try db.namedRows("""
                SELECT id, name, CASE WHEN state = 'scheduled' AND run_at <= \(Self.now) THEN 'pending' ELSE state END AS state,
                    priority, worker, extract(epoch FROM lease_until - clock_timestamp()) AS lease_left, attempts, failures, max_attempts,
                    CASE WHEN state IN ('scheduled', 'retryable') AND run_at > \(Self.now)
                        THEN to_char(run_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') END AS run_at,
                    submitted_at, ended_at, status, error, cancel_requested, schedule,
                    CASE WHEN state = 'running' THEN progress END AS progress, batch, part, item_group
                FROM _batchrun_queue \(filter) ORDER BY id
                """, []).map { row in
                let state = QueueItemState(rawValue: row["state"].string ?? "") ?? .pending
                let failures = row["failures"].int ?? 0
                let id = row["id"].int64 ?? 0
                var item = QueueSnapshot.Item(key: String(id), id: id, name: row["name"].string ?? "", state: state,
                                              priority: row["priority"].int ?? 0,
                                              attempts: state == .running ? failures + 1 : failures + (state == .done || state == .failed ? 1 : 0),
                                              maxAttempts: row["max_attempts"].int ?? 1)
                item.worker = row["worker"].string
                item.leaseLeft = row["lease_left"].double
                item.claims = row["attempts"].int ?? 0
                item.runAt = row["run_at"].string
                item.submittedAt = row["submitted_at"].string ?? ""
                item.endedAt = row["ended_at"].string
                item.status = row["status"].int
                item.error = row["error"].string
                item.cancelling = state == .running && row["cancel_requested"].bool == true ? true : nil
                item.schedule = row["schedule"].string
                item.progress = row["progress"].string
                item.batch = row["batch"].int64
                item.part = row["part"].string
                item.group = row["item_group"].string
                return item
            }
        }
    }

    /// An item's report (JSON) and log, as its runs left them.
    package func output(of id: Int64) throws -> QueueItemOutput? {
        try store.readRecords { db in
            try db.namedRows("SELECT state, report, log FROM _batchrun_queue WHERE id = ?", [.integer(id)]).first.map {
                QueueItemOutput(state: QueueItemState(rawValue: $0["state"].string ?? "") ?? .pending, log: $0["log"].string ?? "",
                                report: $0["report"].string)
            }
        }
    }
}
#endif
