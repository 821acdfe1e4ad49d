import BatchRunStore
import BatchRunEngine
import Foundation

/// Runs the items of a queue (`QueueFolder` or `PostgresQueue`), several at a time: claims the
/// next item whenever a slot is free, hands it to its executor, and moves it when its run ends
/// (`done`, `failed`, or back to `pending` when it was stopped). It takes over items whose
/// worker died (resumed from their checkpoints; one whose run had already ended ok is moved to
/// `done` without running again, its report rebuilt from the store when its process ended
/// before writing it), renews the leases of a PostgreSQL queue's items and stops the run of an
/// item whose lease was lost. What runs an item is the executor's: `JobFileExecutor` in this
/// process, or child processes (`batchrun worker`).
///
/// ```swift
/// let worker = Worker(queue: try openQueue(at: "var/queue"), executor: JobFileExecutor(), options: .init(once: true))
/// let status = worker.run()   // the worst status of its items
/// ```
public final class Worker {
    /// How a worker works.
    public struct Options: Sendable {
        /// How many items run at once.
        package var slots: Int
        /// Work until nothing is pending or running, then return; else until stopped.
        package var once: Bool
        /// A PostgreSQL queue: how long a claim holds an item without renewal (renewed every
        /// third of it).
        package var lease: Double
        /// Say nothing (the `log` closure is not called).
        package var quiet: Bool
        /// The worker as claims name it: `PID@HOST`.
        package var identity: String
        /// What the items of a worker that runs them in this process may touch (the
        /// executor's own for any other).
        package var confinement = ItemConfinement()
        /// Records the queue's counts per state (`batchrun_queue_items`) every few seconds (a
        /// listing of the queue each time: only when metrics are exported).
        package var publishesQueueCounts = false
        /// `--keep DURATION`: done items that ended longer ago than this are pruned, once a
        /// minute, beside the work (`Queue.prune`); nil: none.
        package var keep: Double?

        public init(slots: Int = 1, once: Bool = false, lease: Double = 30, quiet: Bool = false,
                    identity: String = "\(getpid())@\(ProcessInfo.processInfo.hostName)") {
            self.slots = slots
            self.once = once
            self.lease = lease
            self.quiet = quiet
            self.identity = identity
        }
    }

    package let queue: any Queue
    package let executor: any QueueItemExecutor
    package let options: Options
    private let log: (String) -> Void
    /// When set, gets each line with its event and item instead of `log` (`--log-format json`).
    package var logLine: ((WorkerLogLine) -> Void)?

    /// Running items by their run's number.
    private var running: [Int: QueueItem] = [:]
    private var worst: Int32 = ExitStatus.ok
    private var stopping = false
    private let wakePipe = WakePipe()
    private var watch: Int32 = -1
    private var nextRenewal = Date.distantFuture
    /// Running items whose lease was lost (their runs were told to stop).
    private var lost: Set<Int> = []
    /// When each run was told to stop, until its item ends.
    private var toldToStop: [Int: TimeInterval] = [:]
    /// Runs killed for not stopping within `stopGrace`.
    private var killed: Set<Int> = []
    /// Runs whose items `cancel` marked (told to stop; they end `cancelled`).
    private var cancelling: Set<Int> = []
    /// When the running items are next looked at for a cancel (monotonic).
    private var nextCancelCheck: TimeInterval = 0
    /// When the schedules are next looked at for a due time (monotonic).
    private var nextScheduleCheck: TimeInterval = 0
    /// When each run started (monotonic), for `batchrun_item_duration_seconds`.
    private var startedAt: [Int: TimeInterval] = [:]
    /// When the queue's counts are next recorded (monotonic).
    private var nextQueueCount: TimeInterval = 0

    /// How long a run told to stop may take before it is killed: longer than a cancelled job's
    /// two hooks may run (`on_failure`, then `on_complete`, each killed 2 s after its timeout;
    /// a run stops within 250 ms otherwise), shorter than systemd's `TimeoutStopSec` in the
    /// docs. Nothing it had not committed is kept (a transaction ends with its session).
    package static let stopGrace: TimeInterval = 2 * (ShellHook.defaultTimeout + 2) + 15

    /// A worker on `queue` that runs its items in this process, each item's jobs
    /// `maxConcurrentJobs` at once; `log` gets its lines (each item claimed, run, moved; by
    /// default standard output, each line after the time of day).
    public convenience init(queue: JobQueue, options: Options = Options(),
                            maxConcurrentJobs: Int = ProcessInfo.processInfo.activeProcessorCount,
                            log: ((String) -> Void)? = nil) {
        self.init(queue: queue.queue, executor: JobFileExecutor(maxConcurrentJobs: maxConcurrentJobs, confinement: options.confinement),
                  options: options,
                  log: log ?? Worker.printLine)
    }

    /// A worker on `queue` whose items `executor` runs (`batchrun worker`: in child processes).
    package init(queue: any Queue, executor: any QueueItemExecutor, options: Options = Options(),
                 log: @escaping (String) -> Void = Worker.printLine) {
        self.queue = queue
        self.executor = executor
        self.options = options
        self.log = log
    }

    deinit {
        if watch >= 0 { close(watch) }
    }

    /// Wakes or stops this worker from any thread.
    public var control: WorkerControl { WorkerControl(pipe: wakePipe) }

    /// Works until stopped (or, with `once`, until nothing is pending or running); returns the
    /// worst exit status of its items (`ExitStatus.ok`, `.failed`, `.invalid`), or
    /// `ExitStatus.interrupted` once stopped.
    public func run() -> Int32 {
        let control = control
        watch = queue.watch { control.wake() } ?? -1
        if queue.hasLeases { nextRenewal = Date().addingTimeInterval(options.lease / 3) }
        say("worker on \(queue.location): \(options.slots) at once\(options.once ? ", until the queue is empty" : "")", event: "worker_started")
        while true {
            for (run, status) in executor.ended() {
                guard let item = running.removeValue(forKey: run) else { continue }
                lost.remove(run)
                toldToStop[run] = nil
                killed.remove(run)
                ended(item, status: status, cancelled: cancelling.remove(run) != nil,
                      seconds: startedAt.removeValue(forKey: run).map { ProcessInfo.processInfo.systemUptime - $0 })
            }
            renewLeases()
            checkCancels()
            killUnstopped()
            if !stopping {
                queueDueSchedules()
                while running.count < options.slots, let item = claimNext() { start(item) }
            }
            recordGauges()
            pruneOldItems()
            if running.isEmpty && (stopping || options.once) { break }
            waitForSomething()
        }
        executor.shutDown()
        queue.workerEnded()
        return stopping ? ExitStatus.interrupted : worst
    }

    private func claimNext() -> QueueItem? {
        do {
            return try queue.claim(worker: options.identity, lease: options.lease)
        } catch {
            say("cannot claim an item: \(error)")
            return nil
        }
    }

    // MARK: Items

    private func start(_ item: QueueItem) {
        if item.takenOver {
            say("taking over \(item.name) (its worker is gone)", event: "item_taken_over", item: item.name)
            BatchRunMetrics.takeover()
            // Its run may have finished before the worker could end the claim.
            if let report = finishedEarlier(item) {
                keepReport(report, of: item)
                move(item, to: .done, status: ExitStatus.ok, seconds: nil)
                return
            }
        }
        let control = control
        guard let run = executor.start(item, wake: { control.wake() }) else {
            say("cannot start \(item.name)", event: "item_not_started", item: item.name, level: "error")
            move(item, to: .failed, status: ExitStatus.failed, seconds: nil)
            return
        }
        running[run] = item
        startedAt[run] = ProcessInfo.processInfo.systemUptime
        say("running \(item.name) (process \(run))", event: "item_started", item: item.name)
    }

    /// Renews the leases of the running items when due; the run of an item whose lease was
    /// lost is stopped (its commits are fenced already).
    private func renewLeases() {
        guard queue.hasLeases, Date() >= nextRenewal else { return }
        nextRenewal = Date().addingTimeInterval(options.lease / 3)
        // A renewal that cannot reach the server loses nothing yet: the lease runs on.
        let lostItems = running.values.filter { (try? queue.renew($0, lease: options.lease)) == false }
        for (run, item) in running where !lost.contains(run) && lostItems.contains(where: { $0.isSameClaim(as: item) }) {
            say("lost the lease of \(item.name): another worker takes it over; stopping its run")
            lost.insert(run)
            tellToStop(run)
        }
    }

    /// Asks a run to stop after its current batch.
    private func tellToStop(_ run: Int) {
        executor.stop(run)
        if toldToStop[run] == nil { toldToStop[run] = ProcessInfo.processInfo.systemUptime }
    }

    /// Kills a run that was told to stop `stopGrace` ago and still runs its item (a run stuck
    /// on its store must not keep the worker from ending). Its item ends as if stopped.
    private func killUnstopped() {
        let now = ProcessInfo.processInfo.systemUptime   // monotonic: a clock change moves no deadline
        for (run, since) in toldToStop where now - since > Self.stopGrace && !killed.contains(run) {
            guard let item = running[run] else { continue }
            say("\(item.name): its run did not stop within \(Int(Self.stopGrace)) s of being told to; killing process \(run)")
            killed.insert(run)
            executor.kill(run)
        }
    }

    /// Queues what the queue's schedules have due (once a second; each due time once, however
    /// many workers look).
    private func queueDueSchedules() {
        let now = ProcessInfo.processInfo.systemUptime
        guard now >= nextScheduleCheck else { return }
        nextScheduleCheck = now + 1
        do {
            for item in try queue.queueDueSchedules() { say("queued \(item) (schedule)") }
        } catch {
            say("cannot queue the schedules' due items: \(error)")
        }
    }

    /// Cancels the runs of the running items that `batchrun cancel` marked, as a Ctrl-C cancels
    /// a run (the batch in flight rolled back, hooks run); looked for twice a second.
    private func checkCancels() {
        let now = ProcessInfo.processInfo.systemUptime
        guard !running.isEmpty, now >= nextCancelCheck else { return }
        nextCancelCheck = now + 0.5
        for (run, item) in running where !cancelling.contains(run) && (try? queue.isCancelRequested(item)) == true {
            say("cancelling \(item.name) (batchrun cancel)")
            cancelling.insert(run)
            tellToStop(run)
        }
    }

    /// Moves an item whose run ended with exit status `code`: a failed run with attempts left
    /// becomes retryable, due after its backoff; a cancelled one ends `cancelled` unless it
    /// had ended ok first.
    private func ended(_ item: QueueItem, status code: Int32, cancelled: Bool, seconds: Double?) {
        switch code {
        case ExitStatus.ok:
            move(item, to: .done, status: code, seconds: seconds)
        case _ where cancelled:
            move(item, to: .cancelled, status: code, seconds: seconds)
        case ExitStatus.interrupted, 128 + SIGTERM:
            move(item, to: .pending, status: nil, seconds: nil)   // resumes next time
        case ExitStatus.failed where item.failures + 1 < item.attempts:
            let delay = QueueSubmission(backoff: item.backoff).retryDelay(after: item.failures + 1)
            let at = QueueClock.now().addingTimeInterval(delay)
            move(item, to: .retryable, status: code, retryAt: at, seconds: seconds)
        default:
            move(item, to: .failed, status: code, seconds: seconds)
        }
    }

    /// Moves `item` to `state`; `seconds`: how long its run took (nil when it did not run here).
    private func move(_ item: QueueItem, to state: QueueItemState, status: Int32?, retryAt: Date? = nil, seconds: Double?) {
        do {
            guard try queue.finish(item, as: state, status: status, retryAt: retryAt) else {
                say("lost \(item.name): another worker took it over, which resumes its run", event: "item_lost", item: item.name, level: "warning")
                return
            }
        } catch {
            // Not moved: no line that says it was (it stays running until it is taken over), and
            // a `--once` worker exits 1, as for a failed item: cron sees that something is wrong.
            say("cannot move \(item.name) to \(state.rawValue): \(error)", event: "item_not_moved", item: item.name, level: "error")
            worst = max(worst, ExitStatus.failed)
            return
        }
        if state != .pending { BatchRunMetrics.itemEnded(state: state, seconds: seconds) }
        if let status, state != .retryable, state != .cancelled {
            worst = max(worst, status == ExitStatus.ok ? ExitStatus.ok : min(status, ExitStatus.invalid))
        }
        switch state {
        case .pending: say("put back \(item.name)", event: "item_put_back", item: item.name)
        case .retryable:
            let time = retryAt.map { $0.formatted(Date.ISO8601FormatStyle()) } ?? "now"
            say("retryable \(item.name): attempt \(item.failures + 1) of \(item.attempts) failed; next try at \(time)",
                event: "item_retryable", item: item.name, level: "warning")
        default: say("\(state.rawValue) \(item.name)", event: "item_\(state.rawValue)", item: item.name,
                     level: state == .failed ? "error" : "info")
        }
    }

    // MARK: Waiting

    /// Sleeps until a run ends, an item arrives, the worker is woken or stopped, or a quarter
    /// of a second passes (orphans of workers that died elsewhere are looked for four times a
    /// second: a dead worker's lock is gone at once, but nothing tells the others).
    private func waitForSomething() {
        var descriptors = [pollfd(fd: wakePipe.read, events: Int16(POLLIN), revents: 0)]
        if watch >= 0 { descriptors.append(pollfd(fd: watch, events: Int16(POLLIN), revents: 0)) }
        for descriptor in executor.descriptors { descriptors.append(pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)) }
        // A queue with leases (PostgreSQL) is told of new items (NOTIFY) and its leases last
        // seconds: once a second is enough there, and keeps an idle worker's CPU low.
        _ = poll(&descriptors, nfds_t(descriptors.count), queue.hasLeases ? 1000 : 250)
        var buffer = [UInt8](repeating: 0, count: 4096)
        var stopRequested = false
        while true {
            let count = read(wakePipe.read, &buffer, buffer.count)
            guard count > 0 else { break }
            if buffer[0..<count].contains(WorkerControl.stopByte) { stopRequested = true }
        }
        if watch >= 0 { while read(watch, &buffer, buffer.count) > 0 {} }
        if stopRequested { stop() }
    }

    /// Stopped (seen by the loop): no new items; running ones are told to stop and go back to
    /// pending.
    private func stop() {
        guard !stopping else { return }
        stopping = true
        say("stopping: no new items; cancelling the running ones, which go back to pending")
        for run in running.keys { tellToStop(run) }
        executor.stopTaking()
    }

    /// When `--keep` prunes next; what its last prune did, once it ended (read by the loop).
    private var nextPrune: TimeInterval = 0
    private let pruneOutcome = PruneOutcome()

    /// The groups whose pause the metrics have a series for.
    private var pausedGroupsReported: Set<String> = []

    /// Records the slots' gauges, and every 5 s the queue's counts when asked to.
    private func recordGauges() {
        BatchRunMetrics.slots(busy: running.count, idle: max(0, options.slots - running.count))
        guard options.publishesQueueCounts else { return }
        let now = ProcessInfo.processInfo.systemUptime
        guard now >= nextQueueCount else { return }
        nextQueueCount = now + 5
        // The counts of a live snapshot that lists no finished item: what a live page reads, no more.
        if let snapshot = try? queue.snapshot(.live(finishedShown: 0)) { BatchRunMetrics.queueCounts(snapshot) }
        if let batches = try? queue.batches() { BatchRunMetrics.batchParts(batches) }
        if let pause = try? queue.pause() { BatchRunMetrics.paused(pause, reported: &pausedGroupsReported) }
    }

    /// `--keep`: once a minute, prunes the done items older than it on a thread of its own (the
    /// loop goes on claiming), and says what the last prune did.
    private func pruneOldItems() {
        if let said = pruneOutcome.take() { say(said, event: "pruned") }
        guard let keep = options.keep, !stopping else { return }
        let now = ProcessInfo.processInfo.systemUptime
        guard now >= nextPrune, pruneOutcome.start() else { return }
        nextPrune = now + 60
        let (queue, outcome) = (queue, pruneOutcome)
        Thread.detachNewThread {
            do {
                let count = try queue.prune(states: [.done], endedBefore: QueueClock.now().addingTimeInterval(-keep))
                outcome.end(count > 0 ? "pruned \(count) done item\(count == 1 ? "" : "s") older than --keep" : nil)
            } catch {
                outcome.end("cannot prune: \(error)")
            }
        }
    }

    /// A line of the worker's log; `event` and `item` for structured logs.
    package func say(_ message: String, event: String = "worker", item: String? = nil, level: String = "info") {
        guard !options.quiet else { return }
        if let logLine {
            logLine(WorkerLogLine(level: level, event: event, item: item, message: message))
        } else {
            log(message)
        }
    }

    /// Writes a line to standard output after the time of day (`14:03:07  running ...`).
    package static func printLine(_ message: String) {
        let formatter = Date.ISO8601FormatStyle().time(includingFractionalSeconds: false)
        FileHandle.standardOutput.write(Data("\(Date().formatted(formatter))  \(message)\n".utf8))
    }
}
