#if PostgreSQL
import BatchRunEngine
import Foundation

/// A queue in PostgreSQL as a worker's queue: items claimed with `FOR UPDATE SKIP LOCKED` for a
/// lease the worker renews; an item whose lease ran out is taken over. Each claimed item is
/// written to a path every worker on every machine uses for it
/// (`/tmp/batchrun-queue/DATABASE/ID-NAME`), so a taken-over item resumes the same run in the
/// store's history; its run is given the claim's fence, which holds when its store is the
/// queue's database. Its report and output go into the queue's table when it ends.
extension PostgresQueue: Queue {
    package var hasLeases: Bool { true }

    package func submit(fileAt path: String, params: [String: String], sequence: Int, submission: QueueSubmission) throws -> QueueSubmitted {
        let url = URL(fileURLWithPath: path).standardizedFileURL
        let text = try String(contentsOf: url, encoding: .utf8)
        let submitted = try submit(text: text, name: url.lastPathComponent, params: params, directory: url.deletingLastPathComponent().path,
                                   submission: submission)
        return QueueSubmitted(name: "item \(submitted.id) on \(location)", existing: submitted.existing)
    }

    /// The folder a queue's items are written to on every machine.
    var itemFolder: String {
        "/tmp/batchrun-queue/" + location.dropFirst("postgresql://".count).map { $0.isLetter || $0.isNumber ? String($0) : "_" }.joined()
    }

    package func claim(worker: String, lease: Double) throws -> QueueItem? {
        guard let claim = try claimNext(worker: worker, lease: lease) else { return nil }
        let folder = itemFolder
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let base = URL(fileURLWithPath: claim.name).deletingPathExtension().lastPathComponent
        let path = "\(folder)/\(claim.id)-\(base).yaml"
        try Data(claim.text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        // The run fences itself when its store is the queue's database: then a lost lease stops its commits.
        // Its report is the claim's own (by its token): a run that lost the item on this machine
        // cannot overwrite the report of the run that took it over. The output of every attempt
        // on this machine goes to one log, as it ends up in the item's row.
        var item = QueueItem(name: "\(claim.id) \(claim.name)", path: path, baseDirectory: claim.directory, params: claim.params,
                             takenOver: claim.takenOver, reportPath: "\(path).\(claim.token).json", logPath: path + ".log",
                             fence: QueueFence(item: claim.id, token: claim.token, lease: lease, queue: location), claim: .postgres(claim))
        if claim.takenOver { item.earlierReports = earlierReports(of: path, before: claim.token) }
        (item.failures, item.attempts, item.backoff) = (claim.failures, claim.attempts, claim.backoff)
        return item
    }

    /// The reports of claims before `token` of the item at `path` left on this machine, oldest first.
    private func earlierReports(of path: String, before token: Int64) -> [String] {
        let folder = itemFolder
        let name = URL(fileURLWithPath: path).lastPathComponent + "."
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
        // The item's files go while its row is still locked: a worker on this machine that claims
        // it next writes its own copy after that. When the claim was lost they stay (the worker
        // that took the item over may be running it from the same path here), and so does a
        // report of a run that ended ok: that worker may find it and store it.
        let ended = try finish(claim, as: state, status: status, report: state == .pending || state == .retryable ? nil : report, log: log,
                               error: state == .failed || state == .retryable ? Self.firstError(report: report, log: log) : nil,
                               retryIn: retryAt.map { max(0, $0.timeIntervalSince(QueueClock.now())) } ?? 0) {
            for path in [item.path, item.logPath, item.reportPath] + earlierReports(of: item.path, before: claim.token) {
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

    package func isCancelRequested(_ item: QueueItem) throws -> Bool {
        guard case .postgres(let claim) = item.claim else { return false }
        return try isCancelRequested(claim)
    }

    package func list() throws -> [QueueEntry] {
        try items().map { QueueEntry(id: $0.key, name: $0.name, state: $0.state) }
    }

    package func snapshot() throws -> QueueSnapshot {
        // A submit-only role may not read the schedules: then none is listed.
        QueueSnapshot(queue: location, items: try items(), schedules: ((try? schedules()) ?? []).map { QueueScheduleListing($0) },
                      statesAreFolders: false)
    }

    package func output(of id: String) throws -> QueueItemOutput? {
        guard let id = Int64(id) else { return nil }
        return try output(of: id)
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
