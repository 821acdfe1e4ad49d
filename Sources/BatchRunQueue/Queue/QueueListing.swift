import BatchRunContext
import BatchRunEngine
import Foundation

/// What a queue folder holds, as `batchrun queue` shows it: the items of each folder, running
/// ones with their process, job and rows so far, failed ones with the first line of their error.
///
/// ```swift
/// let listing = QueueListing(of: try QueueFolder(path: "var/queue"))
/// print(listing.items.filter { $0.state == .pending }.map(\.name))
/// ```
package struct QueueListing: Sendable, Codable {
    package struct Item: Sendable, Codable {
        package var name: String
        package var state: QueueItemState
        /// For a running item: its process (`PID@HOST`), its running jobs and rows so far.
        package var process: String?
        package var jobs: [String]?
        package var rows: Int?
        /// For a running item whose worker died: true (the next worker takes it over).
        package var orphaned: Bool?
        /// For a failed item: the first line of its error.
        package var error: String?
        package var priority: Int
        /// Attempts that ended failed so far (with the running one, for a running item), and
        /// how many it may have.
        package var attempts: Int
        package var maxAttempts: Int
        /// When a scheduled item is due, or a retryable one's next try (ISO 8601, UTC).
        package var runAt: String?
        /// A running item that `cancel` marked.
        package var cancelling: Bool?
        /// The schedule that queued it.
        package var schedule: String?
        /// When a running item's run started (its store's run state); not in the JSON listing.
        package var startedAt: Date?
        /// How much of the feeds its running steps read is done (bytes read of the feeds' size,
        /// as their last checkpoints say); nil when no running step reads a feed.
        package var fraction: Double?

        package enum CodingKeys: String, CodingKey {
            case name, state, process, jobs, rows, orphaned, error, priority, attempts, cancelling, schedule
            case maxAttempts = "max_attempts", runAt = "run_at"
        }

        package init(name: String, state: QueueItemState, in queue: QueueFolder) {
            self.name = name
            self.state = state
            priority = QueueFolderName.priority(of: name)
            let path = queue.itemPath(name, in: state)
            maxAttempts = QueueFolder.retry(ofItemAt: path).attempts
            let failuresFolder: QueueItemState = state == .pending || state == .running ? .running : state
            let failures = (try? String(contentsOfFile: queue.itemPath(name + ".failures", in: failuresFolder), encoding: .utf8))
                .flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? 0
            attempts = failures + (state == .running || state == .done || state == .failed ? 1 : 0)
            if state == .scheduled || state == .retryable {
                runAt = queue.due(name, in: state).formatted(Date.ISO8601FormatStyle())
            }
            if state == .running, FileManager.default.fileExists(atPath: path + ".cancel") { cancelling = true }
            schedule = QueueFolder.schedule(ofItemAt: path)
        }
    }

    package var queue: String
    package var counts: [String: Int]
    package var items: [Item]
    /// The queue's schedules with their next due time.
    package var schedules: [QueueScheduleListing]

    package init(of queue: QueueFolder) {
        self.queue = queue.path
        var items: [Item] = []
        for state in QueueItemState.allCases {
            for name in queue.items(in: state) { items.append(Self.item(name, state: state, in: queue)) }
        }
        self.items = items
        schedules = ((try? queue.schedules()) ?? []).map { QueueScheduleListing($0) }
        counts = Dictionary(QueueItemState.allCases.map { state in (state.rawValue, items.filter { $0.state == state }.count) },
                            uniquingKeysWith: +)
    }

    /// One item as the listing has it: a running one with its run, a failed or retryable one
    /// with its first error.
    package static func item(_ name: String, state: QueueItemState, in queue: QueueFolder) -> Item {
        var item = Item(name: name, state: state, in: queue)
        if state == .running { Self.describeRunning(&item, in: queue) }
        if state == .failed || state == .retryable { item.error = Self.firstError(of: queue.itemPath(name, in: state)) }
        return item
    }

    /// The run of a running item, from its store's run state.
    private static func describeRunning(_ item: inout Item, in queue: QueueFolder) {
        item.orphaned = !queue.isLocked(item.name)
        let path = queue.itemPath(item.name, in: .running)
        var loader = JobFileLoader(params: QueueFolder.params(ofItemAt: path))
        loader.baseDirectory = queue.path
        guard let file = try? loader.load(path: path),
              let store = try? Store(file.store, model: file.model) else { return }
        let ledger = RunLedger(store: store)
        guard let run = try? ledger.latestRun(file: JobFileRun.identity(of: file)) else { return }
        item.process = "\(run.pid)@\(run.host)"
        item.startedAt = run.startedAt
        let jobs = (try? ledger.jobs(of: run.id)) ?? [:]
        item.jobs = jobs.filter { $0.value.status == .running }.map(\.key).sorted()
        var rows = 0
        var (read, size): (Int64, Int64) = (0, 0)
        for job in jobs.keys {
            for step in ((try? ledger.steps(of: run.id, job: job)) ?? [:]).values {
                rows += step.rows.fetched + step.rows.inserted + step.rows.updated + step.rows.deleted
                if jobs[job]?.status == .running, !step.done, case .feed(let position)? = step.position {
                    read += position.offset
                    size += position.feedSize
                }
            }
        }
        item.rows = rows
        if size > 0 { item.fraction = min(1, Double(read) / Double(size)) }
    }

    /// The first error of a failed item: from its report, else the first `error:` line of its log.
    private static func firstError(of path: String) -> String? {
        if let data = FileManager.default.contents(atPath: path + ".json"), let report = try? RunReport(jsonData: data),
           let error = report.jobs.compactMap(\.error).first {
            return error.split(separator: "\n").first.map(String.init)
        }
        guard let log = try? String(contentsOfFile: path + ".log", encoding: .utf8) else { return nil }
        return log.split(separator: "\n").first { $0.contains("error:") }.map { String($0).trimmingCharacters(in: .whitespaces) }
    }
}
