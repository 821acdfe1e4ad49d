#if PostgreSQL
import BatchRunEngine
import BatchRunFeeds
import BatchRunPostgres
import Foundation

/// A queue in PostgreSQL as a worker's queue: items claimed with `FOR UPDATE SKIP LOCKED` for a
/// lease the worker renews; an item whose lease ran out is taken over. A claimed item's text
/// goes to its run as it is (it is written to no file); its run is known in the store's history
/// by the item (`postgresql://HOST:PORT/DB#ID`), so a taken-over item resumes the same run on
/// any machine, and is given the claim's fence, which holds when its store is the queue's
/// database. Its output and report are kept in the worker's own scratch folder while it runs
/// and go into the queue's table when it ends.
extension PostgresQueue: Queue {
    package var hasLeases: Bool { true }

    package func submit(fileAt path: String, params: [String: String], sequence: Int, submission: QueueSubmission) throws -> QueueSubmitted {
        let url = URL(fileURLWithPath: path).standardizedFileURL
        let text = try String(contentsOf: url, encoding: .utf8)
        let submitted = try submit(text: text, name: url.lastPathComponent, params: params, directory: url.deletingLastPathComponent().path,
                                   submission: submission)
        return QueueSubmitted(name: "item \(submitted.id) on \(location)", existing: submitted.existing)
    }

    package func submitBatch(fileAt path: String, params: [String: String], submission: QueueSubmission, fanOut: FanOut,
                             parts: [FeedPart]) throws -> QueueBatchSubmitted {
        let url = URL(fileURLWithPath: path).standardizedFileURL
        let text = try String(contentsOf: url, encoding: .utf8)
        return try submitBatch(text: text, name: url.lastPathComponent, params: params, directory: url.deletingLastPathComponent().path,
                               submission: submission, fanOut: fanOut, parts: parts)
    }

    package func claim(worker: String, lease: Double) throws -> QueueItem? {
        guard let claim = try claimNext(worker: worker, lease: lease) else { return nil }
        let kept = "\(try scratch.path())/\(claim.id)"
        // The run fences itself when its store is the queue's database: then a lost lease stops its commits.
        // Its report is the claim's own (by its token): a run that lost the item in this worker
        // cannot overwrite the report of the run that took it over. The output of every attempt
        // in this worker goes to one log, as it ends up in the item's row.
        var item = QueueItem(name: "\(claim.id) \(claim.name)", path: claim.name, text: claim.text, identity: runIdentity(of: claim.id),
                             baseDirectory: claim.directory, params: claim.params, takenOver: claim.takenOver,
                             reportPath: "\(kept).\(claim.token).json", logPath: "\(kept).log",
                             fence: QueueFence(item: claim.id, token: claim.token, lease: lease, queue: location), claim: .postgres(claim))
        if claim.takenOver { item.earlierReports = earlierReports(of: claim.id, before: claim.token) }
        (item.failures, item.attempts, item.backoff) = (claim.failures, claim.attempts, claim.backoff)
        item.membership = claim.membership
        return item
    }

    /// What the store's run history knows item `id`'s runs by: the queue's server, port and
    /// database and the item (not the user, nor a password: every worker's runs of it are one).
    func runIdentity(of id: Int64) -> String {
        guard let place = try? PostgresLocation(url: location) else { return "\(location)#\(id)" }
        let host = place.isUnixSocket ? "" : place.host.contains(":") ? "[\(place.host)]" : place.host
        return "postgresql://\(host):\(place.port)/\(place.database)#\(id)"
    }

    /// The reports of this worker's claims before `token` of item `id`, oldest first (a claim
    /// it lost whose run went on to the end).
    private func earlierReports(of id: Int64, before token: Int64) -> [String] {
        guard let folder = try? scratch.path() else { return [] }
        let name = "\(id)."
        let files = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return files.compactMap { file -> (Int64, String)? in
            guard file.hasPrefix(name), file.hasSuffix(".json"),
                  let earlier = Int64(file.dropFirst(name.count).dropLast(".json".count)), earlier < token else { return nil }
            return (earlier, "\(folder)/\(file)")
        }.sorted { $0.0 < $1.0 }.map(\.1)
    }

    package func finish(_ item: QueueItem, as state: QueueItemState, status: Int32?, retryAt: Date?) throws -> Bool {
        guard case .postgres(let claim) = item.claim else { return false }
        let report = try? String(contentsOfFile: item.reportPath, encoding: .utf8)
        let log = (try? String(contentsOfFile: item.logPath, encoding: .utf8)) ?? ""
        // The item's files go while its row is still locked: when this worker claims it next, it
        // starts its own after that. When the claim was lost they stay (this worker may have
        // taken the item over again, and be running it with the same log), and so does a report
        // of a run that ended ok: that claim may find it and store it.
        let ended = try finish(claim, as: state, status: status, report: state == .pending || state == .retryable ? nil : report, log: log,
                               error: state == .failed || state == .retryable ? Self.firstError(report: report, log: log) : nil,
                               retryIn: retryAt.map { max(0, $0.timeIntervalSince(QueueClock.now())) } ?? 0) {
            for path in [item.logPath, item.reportPath] + earlierReports(of: claim.id, before: claim.token) {
                try? FileManager.default.removeItem(atPath: path)
            }
        }
        if !ended && state != .done { try? FileManager.default.removeItem(atPath: item.reportPath) }
        return ended
    }

    package func renew(_ item: QueueItem, lease: Double) throws -> Bool {
        guard case .postgres(let claim) = item.claim else { return false }
        return try renew(claim, lease: lease)
    }

    package func cancel(_ name: String) throws -> QueueCancellation {
        guard let id = Int64(name) else { return .notFound }
        return try cancel(id: id)
    }

    package func retry(_ name: String) throws -> QueueRetry {
        guard let id = Int64(name) else { return .notFound }
        return try retry(id: id)
    }

    package func failedItems(since: Date?, group: String?) throws -> [String] {
        try store.readRecords { db in
            try db.rows("""
                SELECT id FROM _batchrun_queue WHERE state = 'failed' AND (?::int = 0 OR ended_at >= to_timestamp(?::double precision))
                    AND (?::int = 0 OR item_group = ?::text)
                ORDER BY ended_at, id
                """, [.integer(since == nil ? 0 : 1), .real(since?.timeIntervalSince1970 ?? 0), .integer(group == nil ? 0 : 1),
                      .text(group ?? "")]).compactMap { $0.first?.int64.map(String.init) }
        }
    }

    package func isCancelRequested(_ item: QueueItem) throws -> Bool {
        guard case .postgres(let claim) = item.claim else { return false }
        return try isCancelRequested(claim)
    }

    package func list() throws -> [QueueEntry] {
        try items().map { QueueEntry(id: $0.key, name: $0.name, state: $0.state) }
    }

    /// Every row is read for `.everything`. A live snapshot reads only what it shows, whatever
    /// the table holds: the counts (one `GROUP BY`), the running, scheduled and retryable items,
    /// the next pending ones and the newest finished and failed ones; a running item with the
    /// progress its run publishes into its row (`ItemProgress`; none until the run's first
    /// second, none once the claim ended).
    package func snapshot(_ extent: QueueSnapshot.Extent) throws -> QueueSnapshot {
        // A submit-only role may not read the schedules: then none is listed.
        let schedules = ((try? schedules()) ?? []).map { QueueScheduleListing($0) }
        guard case .live(let shown) = extent else {
            return QueueSnapshot(queue: location, items: try items(), schedules: schedules, statesAreFolders: false)
        }
        let counts = try liveCounts()
        let next = try nextPending(shown)
        let newest = "ORDER BY ended_at DESC NULLS LAST, id DESC LIMIT \(shown)"
        var items = try items(where: """
            WHERE id IN (SELECT id FROM _batchrun_queue WHERE state IN ('running', 'retryable') OR (state = 'scheduled' AND run_at > \(Self.now))
                UNION ALL (SELECT id FROM _batchrun_queue WHERE state IN ('done', 'cancelled') \(newest))
                UNION ALL (SELECT id FROM _batchrun_queue WHERE state = 'failed' \(newest))
                UNION ALL SELECT unnest(ARRAY[\(next.map(String.init).joined(separator: ","))]::bigint[]))
            """)
        for index in items.indices {
            items[index].ended = items[index].endedAt.flatMap(Self.serverDate)
            guard items[index].state == .running else { continue }
            items[index].orphaned = (items[index].leaseLeft ?? 0) < 0
            items[index].process = items[index].worker
            if let published = items[index].progress.flatMap({ ItemProgress.decode(Data($0.utf8)) }) { items[index].show(published) }
        }
        let pending = Dictionary(items.filter { $0.state == .pending }.map { ($0.id ?? 0, $0) }, uniquingKeysWith: { first, _ in first })
        let listed = items.filter { [.running, .scheduled, .retryable].contains($0.state) }
            + next.compactMap { pending[$0] }
            + QueueSnapshot.newest(items.filter { $0.state == .done || $0.state == .cancelled }, shown: shown)
            + QueueSnapshot.newest(items.filter { $0.state == .failed }, shown: shown)
        return QueueSnapshot(queue: location, items: listed, schedules: schedules, statesAreFolders: false, counts: counts)
    }

    /// Each state's items, counted by the server (a scheduled item that is due counts as pending).
    private func liveCounts() throws -> [QueueItemState: Int] {
        try store.readRecords { db in
            var counts: [QueueItemState: Int] = [:]
            for row in try db.namedRows("""
                SELECT CASE WHEN state = 'scheduled' AND run_at <= \(Self.now) THEN 'pending' ELSE state END AS state, count(*) AS n
                FROM _batchrun_queue GROUP BY 1
                """, []) {
                if let state = row["state"].string.flatMap(QueueItemState.init(rawValue:)) { counts[state, default: 0] += row["n"].int ?? 0 }
            }
            return counts
        }
    }

    /// The ids of the next `count` pending items, in the order a claim takes them.
    private func nextPending(_ count: Int) throws -> [Int64] {
        try store.readRecords { db in
            try db.namedRows("""
                SELECT id FROM _batchrun_queue WHERE state = 'pending' OR (state = 'scheduled' AND run_at <= \(Self.now))
                ORDER BY priority DESC, run_at, id LIMIT \(count)
                """, []).compactMap { $0["id"].int64 }
        }
    }

    /// `2026-11-26 14:03:07.12+00`, as PostgreSQL writes a timestamptz as text (a session in UTC).
    private static func serverDate(_ text: String) -> Date? {
        ItemProgress.date(String(text.prefix(19)).replacingOccurrences(of: " ", with: "T") + "Z")
    }

    package func output(of id: String) throws -> QueueItemOutput? {
        guard let id = Int64(id) else { return nil }
        return try output(of: id)
    }

    package func workerEnded() {
        scratch.remove()
    }

    package func watch(wake: @escaping @Sendable () -> Void) -> Int32? {
        try? onSubmit(wake)
        return nil
    }

    /// The first error of a failed run: from its report, else the first `error:` line of its output.
    static func firstError(report: String?, log: String) -> String? {
        if let report, let decoded = try? RunReport(jsonData: Data(report.utf8)), let error = decoded.jobs.compactMap(\.error).first {
            return error.split(separator: "\n").first.map(String.init)
        }
        return log.split(separator: "\n").first { $0.contains("error:") }.map { String($0).trimmingCharacters(in: .whitespaces) }
    }
}
#endif
