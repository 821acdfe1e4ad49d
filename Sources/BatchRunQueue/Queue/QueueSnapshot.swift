import BatchRunContext
import BatchRunEngine
import Foundation

/// What a queue holds at one moment, as every reader shows it: `batchrun queue` as text and as
/// JSON, its HTML page, `batchrun serve`'s live page. A folder and a PostgreSQL queue give the
/// same value (`Queue.snapshot(_:)`); what only one kind knows (a folder item's process and rows
/// so far, a PostgreSQL item's worker and lease) is nil for the other.
///
/// ```swift
/// let snapshot = try openQueue(at: "var/queue").snapshot()
/// print(snapshot.items(in: [.pending]).map(\.name))
/// ```
package struct QueueSnapshot: Sendable, Encodable {
    /// How much a snapshot reads.
    package enum Extent: Sendable, Equatable {
        /// Every item with what is known of it (`batchrun queue`): a running folder item's run
        /// read from its store.
        case everything
        /// What a live page shows each second, read cheaply: every running, scheduled and
        /// retryable item (a running one with the progress its run publishes, not from its
        /// store); the first `finishedShown` pending items in run order, the rest counted; the newest `finishedShown` of the done and
        /// cancelled items, and of the failed ones, newest first, the rest counted. A folder's
        /// finished states are listed only when they changed (`FinishedFolderIndex`).
        case live(finishedShown: Int)
    }

    package struct Item: Sendable, Encodable {
        /// What the queue names the item by (`queue --log ID`, `cancel ID`): a folder item's
        /// file name, a PostgreSQL item's id. Not in the JSON: `id` (PostgreSQL) or `name` is.
        package var key: String
        /// A PostgreSQL item's id.
        package var id: Int64?
        package var name: String
        package var state: QueueItemState
        /// For a running item: its process (`PID@HOST`), its running jobs and rows so far.
        package var process: String?
        package var jobs: [String]?
        package var rows: Int?
        /// For a running item whose worker died: true (the next worker takes it over).
        package var orphaned: Bool?
        /// For a running item of a queue with leases: its worker, and the seconds until its
        /// lease runs out (negative: it ran out; the next claim takes it over).
        package var worker: String?
        package var leaseLeft: Double?
        /// Claims of the item so far (each attempt, each takeover, each resumption), where the queue counts them.
        package var claims: Int?
        /// For a failed item: the first line of its error.
        package var error: String?
        package var priority: Int
        /// Attempts that ended failed so far (with the running one, for a running item), and
        /// how many it may have.
        package var attempts: Int
        package var maxAttempts: Int
        /// When a scheduled item is due, or a retryable one's next try (ISO 8601, UTC).
        package var runAt: String?
        /// When it was submitted and when it ended, where the queue keeps them.
        package var submittedAt: String?
        package var endedAt: String?
        /// Its run's exit status, where the queue keeps it.
        package var status: Int?
        /// A running item that `cancel` marked.
        package var cancelling: Bool?
        /// The schedule that queued it.
        package var schedule: String?
        /// When a running item's run started (its store's run state); not in the JSON listing.
        package var startedAt: Date?
        /// How much of the feeds its running steps read is done (bytes read of the feeds' size,
        /// as their last checkpoints say); nil when no running step reads a feed.
        package var fraction: Double?
        /// A running item's progress as its run last published it (`ItemProgress` JSON); not listed.
        package var progress: String?
        /// When it ended, where known (a finished item of a live snapshot); not in the JSON listing.
        package var ended: Date?
        /// An item of a fan-out batch: the batch's number, and the part it reads (for a part).
        package var batch: Int64?
        package var part: String?
        /// The group `submit --group` put it in.
        package var group: String?

        package enum CodingKeys: String, CodingKey {
            case id, name, state, process, jobs, rows, orphaned, worker, claims, error, priority, attempts, status, cancelling, schedule, batch, part, group
            case leaseLeft = "lease_left_s", maxAttempts = "max_attempts", runAt = "run_at", submittedAt = "submitted_at", endedAt = "ended_at"
        }

        package init(key: String, id: Int64? = nil, name: String, state: QueueItemState, priority: Int = 0, attempts: Int = 0,
                     maxAttempts: Int = 1) {
            self.key = key
            self.id = id
            self.name = name
            self.state = state
            self.priority = priority
            self.attempts = attempts
            self.maxAttempts = maxAttempts
        }

        /// An item of a queue folder, with what its files say.
        package init(name: String, state: QueueItemState, in queue: QueueFolder) {
            self.init(key: name, name: name, state: state, priority: QueueFolderName.priority(of: name))
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
            group = QueueFolder.group(ofItemAt: path)
            if let membership = QueueFolder.membership(ofItemAt: path) {
                batch = membership.batch
                part = membership.role.part?.name
            }
        }

        /// What its run published of its progress.
        package mutating func show(_ published: ItemProgress) {
            process = "\(published.pid)@\(published.host)"
            jobs = published.jobs
            rows = published.rows
            fraction = published.fraction
            startedAt = published.startedAt
        }
    }

    package var queue: String
    /// When it was taken; not in the JSON listing.
    package var takenAt = Date()
    /// How many items each state holds (also those a live snapshot does not list).
    package var counts: [String: Int]
    package var items: [Item]
    /// The queue's schedules with their next due time.
    package var schedules: [QueueScheduleListing]
    /// True when each state is a folder of the queue (`pending/`, `done/`): how a listing heads them.
    package var statesAreFolders: Bool
    /// The fan-out batches (JOBFILE.md 17), oldest first; empty unless the reader asked for them
    /// (`Queue.snapshot()` does).
    package var batches: [QueueBatch] = []
    /// The groups' limits (`batchrun limit`), by group; empty unless asked for, as `batches`.
    package var limits: [QueueGroupLimit] = []
    /// What `batchrun pause` paused (JSON: `paused`, `paused_groups`).
    package var pause = QueuePause()
    /// The audit log's newest lines, oldest first (`serve --actions`).
    package var audit: [QueueAuditEntry] = []

    package enum CodingKeys: String, CodingKey {
        case queue, counts, items, schedules, batches, limits, paused, audit
        case pausedGroups = "paused_groups"
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(queue, forKey: .queue)
        try container.encode(counts, forKey: .counts)
        try container.encode(items, forKey: .items)
        try container.encode(schedules, forKey: .schedules)
        try container.encode(batches, forKey: .batches)
        try container.encode(limits, forKey: .limits)
        try container.encode(pause.queue, forKey: .paused)
        try container.encode(pause.groups, forKey: .pausedGroups)
        try container.encode(audit, forKey: .audit)
    }

    /// `counts`: each state's items, when not every item is listed.
    package init(queue: String, items: [Item], schedules: [QueueScheduleListing], statesAreFolders: Bool,
                 counts: [QueueItemState: Int]? = nil) {
        self.queue = queue
        self.items = items
        self.schedules = schedules
        self.statesAreFolders = statesAreFolders
        self.counts = Dictionary(QueueItemState.allCases.map { state in
            (state.rawValue, counts.map { $0[state] ?? 0 } ?? items.filter { $0.state == state }.count)
        }, uniquingKeysWith: +)
    }

    /// A queue that could not be read: nothing listed.
    package init(unreadable queue: String) {
        self.init(queue: queue, items: [], schedules: [], statesAreFolders: false)
    }

    /// The listed items in `states`, in the snapshot's order.
    package func items(in states: Set<QueueItemState>) -> [Item] {
        items.filter { states.contains($0.state) }
    }

    /// The newest `shown` of `items`, newest first (by when they ended).
    static func newest(_ items: [Item], shown: Int) -> [Item] {
        Array(items.sorted { ($0.ended ?? .distantPast) > ($1.ended ?? .distantPast) }.prefix(shown))
    }

    /// A queue folder's items, each state's in run order.
    package init(of queue: QueueFolder) {
        var items: [Item] = []
        for state in QueueItemState.allCases {
            for name in queue.items(in: state) { items.append(Self.item(name, state: state, in: queue)) }
        }
        self.init(queue: queue.path, items: items, schedules: ((try? queue.schedules()) ?? []).map { QueueScheduleListing($0) },
                  statesAreFolders: true)
    }

    /// A queue folder as a live page shows it (`Extent.live`): its finished states through the
    /// indexes the `QueueFolder` value keeps between snapshots (a folder that did not change is
    /// not listed again), pending items counted from the folder's entries. Only what is shown
    /// is read: the shown failed items' first error lines, the running items' published progress.
    init(live queue: QueueFolder, finishedShown shown: Int) {
        let takenAt = Date()
        var counts: [QueueItemState: Int] = [:]
        var listed: [Item] = []
        for state in [QueueItemState.running, .scheduled, .retryable] {
            let names = queue.items(in: state)
            counts[state] = names.count
            listed += names.map { state == .running ? Self.published($0, in: queue) : Self.item($0, state: state, in: queue) }
        }
        counts[.pending] = FolderEntries.itemCount(in: queue.folder(.pending))
        // The next to run, from the folder's index: one that left (claimed, cancelled) is forgotten.
        var next: [(key: String, name: String)] = []
        var page = queue.pendingIndex.first(shown)
        while !page.isEmpty, next.count < shown {
            for entry in page where next.count < shown {
                if access(queue.folder(.pending) + "/" + entry.name, F_OK) == 0 { next.append(entry) } else { queue.pendingIndex.remove(entry.name) }
            }
            page = next.count < shown ? queue.pendingIndex.entries(after: page[page.count - 1], limit: shown) : []
        }
        listed += next.map { Item(key: $0.name, name: $0.name, state: .pending, priority: QueueFolderName.priority(of: $0.name)) }
        var finished: [Item] = [], failed: [Item] = []
        for state in [QueueItemState.done, .cancelled, .failed] {
            let index = queue.finishedIndexes.refreshed(state, of: queue, shown: shown, now: takenAt)
            counts[state] = index.count
            let items = index.newest.map { name, ended in
                var item = state == .failed ? Self.item(name, state: state, in: queue) : Item(key: name, name: name, state: state)
                item.ended = ended
                return item
            }
            if state == .failed { failed = items } else { finished += items }
        }
        self.init(queue: queue.path, items: listed + Self.newest(finished, shown: shown) + Self.newest(failed, shown: shown),
                  schedules: ((try? queue.schedules()) ?? []).map { QueueScheduleListing($0) }, statesAreFolders: true, counts: counts)
        self.takenAt = takenAt
    }

    /// A running folder item with the progress its run publishes beside it (`ItemProgress`),
    /// without opening its store; only its name until the run's first second.
    private static func published(_ name: String, in queue: QueueFolder) -> Item {
        var item = Item(key: name, name: name, state: .running)
        item.orphaned = !queue.isLocked(name)
        if FileManager.default.fileExists(atPath: queue.itemPath(name, in: .running) + ".cancel") { item.cancelling = true }
        if let progress = ItemProgress.read(queue.itemPath(name, in: .running) + ".progress") { item.show(progress) }
        return item
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
