import BatchRunKit
import Foundation

/// Runs the items of a queue (a folder or a PostgreSQL queue: its `WorkSource`) in child
/// processes, as `batchrun run ITEM --resume` would (processes, not threads: an item that
/// crashes takes nothing else with it). A folder item runs in a child of its own, which is handed
/// the item's lock, so an item is orphaned only when both the worker and its child are gone. A
/// PostgreSQL item, which holds no lock, runs in a runner (`batchrun runner`): a child that runs
/// the worker's items one after another, so a small item costs no process start; its lease is
/// renewed while it runs. A runner is replaced after `itemsPerRunner` items, so what items leave
/// in memory goes back.
final class QueueWorker {
    let source: any WorkSource
    let workers: Int
    let once: Bool
    let jobs: Int?
    let quiet: Bool
    /// Running items by the process running them (their own child, or a runner).
    private var running: [pid_t: WorkItem] = [:]
    private var runners: [pid_t: Runner] = [:]
    private var worst: Int32 = ExitStatus.ok
    private var stopping = false
    private let wake: (read: Int32, write: Int32)
    private var watch: Int32 = -1
    private var nextRenewal = Date.distantFuture
    /// Running items whose lease was lost (their runs were told to stop).
    private var lost: Set<pid_t> = []
    /// When each process running an item was told to stop (SIGINT), until its item ends.
    private var toldToStop: [pid_t: TimeInterval] = [:]
    /// Processes killed for not stopping within `stopGrace`.
    private var killed: Set<pid_t> = []

    /// How long a run told to stop may take before it is killed: longer than a cancelled job's
    /// two hooks may run (`on_failure`, then `on_complete`, each killed 2 s after its timeout;
    /// a run stops within 250 ms otherwise), shorter than systemd's `TimeoutStopSec` in the
    /// docs. Nothing it had not committed is kept (a transaction ends with its session).
    static let stopGrace: TimeInterval = 2 * (ShellHook.defaultTimeout + 2) + 15

    /// A `batchrun runner` child.
    private struct Runner {
        /// Its descriptor 3, where the requests go; -1 once closed (it ends after the last).
        var requests: Int32
        /// Its descriptor 4, where the items' exit statuses come from.
        let statuses: Int32
        var itemsRun = 0
        /// Bytes of a status line not yet ended.
        var partial: [UInt8] = []
    }

    static let itemsPerRunner = 100

    init(source: any WorkSource, workers: Int, once: Bool, jobs: Int?, quiet: Bool) {
        self.source = source
        self.workers = workers
        self.once = once
        self.jobs = jobs
        self.quiet = quiet
        var fds: [Int32] = [0, 0]
        _ = pipe(&fds)
        _ = fcntl(fds[0], F_SETFL, O_NONBLOCK)
        _ = fcntl(fds[1], F_SETFL, O_NONBLOCK)
        wake = (fds[0], fds[1])
    }

    /// Works until stopped (or, with `once`, until nothing is pending or running); returns the
    /// exit status: the worst of the items', or 130 after SIGINT or SIGTERM.
    func run() -> Int32 {
        installSignals()
        let wakeWrite = wake.write
        watch = source.watch {
            var byte = Self.childByte
            _ = write(wakeWrite, &byte, 1)
        } ?? -1
        if let interval = source.renewalInterval { nextRenewal = Date().addingTimeInterval(interval) }
        say("worker on \(source.name): \(workers) at once\(once ? ", until the queue is empty" : "")")
        while true {
            collectStatuses()
            reap()
            renewLeases()
            killUnstopped()
            let isStopping = stopping
            if !isStopping {
                while running.count < workers, let claim = claimNext() { start(claim) }
            }
            if running.isEmpty && (isStopping || once) { break }
            waitForSomething()
        }
        endRunners()
        return stopping ? ExitStatus.interrupted : worst
    }

    private func claimNext() -> WorkItem? {
        do {
            return try source.claimNext()
        } catch {
            say("cannot claim an item: \(error)")
            return nil
        }
    }

    // MARK: Items

    private func start(_ item: WorkItem) {
        if item.takenOver {
            say("taking over \(item.name) (its worker is gone)")
            // Its child may have finished the run before the worker could end the claim.
            if let report = finishedEarlier(item) {
                keepReport(report, of: item)
                move(item, to: .done, status: ExitStatus.ok)
                return
            }
        }
        var arguments = ["run", item.path, "--resume", "--relative-to", item.relativeTo, "--report", item.reportPath,
                         "--no-progress", "--color", "never"] + item.extraArguments
        if let jobs { arguments += ["--jobs", String(jobs)] }
        for (name, value) in item.params.sorted(by: { $0.key < $1.key }) {
            arguments += ["--param", "\(name)=\(value)"]
        }
        let started = item.lock == nil ? runInRunner(arguments, log: item.logPath)
            : spawn(arguments, log: item.logPath, descriptors: item.lock.map { [$0] } ?? [])
        guard let pid = started else {
            say("cannot start \(item.name)")
            move(item, to: .failed, status: ExitStatus.failed)
            return
        }
        running[pid] = item
        say("running \(item.name) (process \(pid))")
    }

    /// Renews the leases of the running items when due; the child of an item whose lease was
    /// lost is stopped (its commits are fenced already).
    private func renewLeases() {
        guard let interval = source.renewalInterval, Date() >= nextRenewal else { return }
        nextRenewal = Date().addingTimeInterval(interval)
        let lostItems = source.renew(Array(running.values))
        for (pid, item) in running where !lost.contains(pid) && lostItems.contains(where: { $0.isSameClaim(as: item) }) {
            say("lost the lease of \(item.name): another worker takes it over; stopping its run")
            lost.insert(pid)
            tellToStop(pid)
        }
    }

    /// SIGINT to the process running an item: its run stops after its current batch.
    private func tellToStop(_ pid: pid_t) {
        kill(pid, SIGINT)
        if toldToStop[pid] == nil { toldToStop[pid] = ProcessInfo.processInfo.systemUptime }
    }

    /// Kills a process that was told to stop `stopGrace` ago and still runs its item (a run
    /// stuck on its store must not keep the worker from ending). Its item ends as if stopped.
    private func killUnstopped() {
        let now = ProcessInfo.processInfo.systemUptime   // monotonic: a clock change moves no deadline
        for (pid, since) in toldToStop where now - since > Self.stopGrace && !killed.contains(pid) {
            guard let item = running[pid] else { continue }
            say("\(item.name): its run did not stop within \(Int(Self.stopGrace)) s of being told to; killing process \(pid)")
            killed.insert(pid)
            retire(pid)   // a runner killed takes no other item
            kill(pid, SIGKILL)
        }
    }

    /// The latest run of the item, rebuilt from the store, when it ended ok (the worker died
    /// before moving the item).
    private func finishedEarlier(_ item: WorkItem) -> RunReport? {
        var loader = JobFileLoader(params: item.params)
        loader.baseDirectory = item.relativeTo
        guard let file = try? loader.load(path: item.path),
              let store = try? Store(file.store, model: file.model),
              let report = try? JobFileRun.recordedReport(of: file, in: store), report.status == .ok else { return nil }
        return report
    }

    /// The run a kept report is of (decoded without its conflicts and jobs).
    private struct RecordedRun: Decodable {
        let runID: Int64?
        enum CodingKeys: String, CodingKey { case runID = "run_id" }
    }

    /// A finished item's report, when its process ended before writing it: rebuilt from the
    /// store's run state (its conflicts are not there), and said so in its log.
    private func keepReport(_ report: RunReport, of item: WorkItem) {
        let path = item.reportPath
        // A report of this run is kept (one an earlier claim's run wrote is taken over); one left
        // by an earlier, cancelled attempt is replaced.
        for candidate in [path] + item.earlierReports.reversed() {
            guard let data = FileManager.default.contents(atPath: candidate),
                  let kept = try? JSONDecoder().decode(RecordedRun.self, from: data), kept.runID == report.runID else { continue }
            if candidate == path || rename(candidate, path) == 0 { return }
        }
        do {
            try report.writeJSON(to: path)
        } catch {
            say("cannot write the report of \(item.name): \(error.localizedDescription)")
            return
        }
        let note = "batchrun worker: run \(report.runID.map(String.init) ?? "?") had ended ok, but its process ended before "
            + "writing its report; the report was rebuilt from the store's run state (without its conflicts)\n"
        if let log = FileHandle(forWritingAtPath: item.logPath) ?? {
            _ = FileManager.default.createFile(atPath: item.logPath, contents: nil)
            return FileHandle(forWritingAtPath: item.logPath)
        }() {
            log.seekToEndOfFile()
            log.write(Data(note.utf8))
            try? log.close()
        }
    }

    /// Collects ended children and moves their items.
    private func reap() {
        while true {
            var status: Int32 = 0
            let pid = waitpid(-1, &status, WNOHANG)
            guard pid > 0 else { return }
            let wasRunner = runners[pid] != nil
            if wasRunner {
                readStatuses(of: pid)   // a status it wrote before it ended
                if let runner = runners.removeValue(forKey: pid) {
                    if runner.requests >= 0 { close(runner.requests) }
                    close(runner.statuses)
                }
            }
            toldToStop[pid] = nil
            // Killed here, and not ended by itself just before.
            let killedHere = killed.remove(pid) != nil && status & 0x7f == SIGKILL
            guard let item = running.removeValue(forKey: pid) else { continue }
            lost.remove(pid)
            ended(item, status: Self.itemStatus(processStatus: status, ranInRunner: wasRunner, killedHere: killedHere))
        }
    }

    /// The exit status of an item whose process ended (`processStatus` as `waitpid` gives it)
    /// before the item's status was read. An item's own child ends with the item's status. A
    /// runner answers each item on its status pipe, so one that ended without answering did not
    /// finish the item, or could not say so (its answer failed to write): the item is never
    /// `done` then, and a clean exit puts it back. Killed here for not stopping: put back.
    static func itemStatus(processStatus status: Int32, ranInRunner: Bool, killedHere: Bool) -> Int32 {
        if killedHere { return ExitStatus.interrupted }
        let signal = status & 0x7f
        if signal != 0 && signal != 0x7f { return 128 + signal }
        let code = (status >> 8) & 0xff
        return ranInRunner && code == ExitStatus.ok ? ExitStatus.interrupted : code
    }

    /// Moves an item whose run ended with exit status `code`.
    private func ended(_ item: WorkItem, status code: Int32) {
        switch code {
        case ExitStatus.ok:
            move(item, to: .done, status: code)
        case ExitStatus.interrupted, 128 + SIGTERM:
            move(item, to: .pending, status: nil)   // resumes next time
        default:
            move(item, to: .failed, status: code)
        }
    }

    // MARK: Runners

    /// Sends the item to an idle runner, started when there is none; the runner's process.
    private func runInRunner(_ arguments: [String], log: String) -> pid_t? {
        guard let request = try? JSONEncoder().encode(RunnerRequest(arguments: arguments, log: log)) else { return nil }
        let line = Array(request) + [UInt8(ascii: "\n")]
        for _ in 0..<2 {   // an idle runner may have just died: then a new one
            guard let pid = runners.first(where: { running[$0.key] == nil && $0.value.requests >= 0 })?.key ?? startRunner()
            else { return nil }
            if Self.writeAll(line, to: runners[pid]!.requests) {
                runners[pid]!.itemsRun += 1
                return pid
            }
            retire(pid)
        }
        return nil
    }

    private func startRunner() -> pid_t? {
        var requests: [Int32] = [0, 0], statuses: [Int32] = [0, 0]
        guard pipe(&requests) == 0 else { return nil }
        guard pipe(&statuses) == 0 else {
            requests.forEach { close($0) }
            return nil
        }
        // Every end is close-on-exec (set before any spawn: they all happen on this thread): the
        // worker's stay out of every child, and the runner gets its own as 3 and 4 only (moved
        // above them first, so that setting one cannot overwrite the other).
        for descriptor in requests + statuses { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        if requests[0] < 5 { requests[0] = Self.moveAbove4(requests[0]) }
        if statuses[1] < 5 { statuses[1] = Self.moveAbove4(statuses[1]) }
        _ = fcntl(statuses[0], F_SETFL, O_NONBLOCK)
        let pid = spawn(["runner", "--worker", String(getpid())], log: nil, descriptors: [requests[0], statuses[1]])
        close(requests[0])
        close(statuses[1])
        guard let pid else {
            close(requests[1])
            close(statuses[0])
            return nil
        }
        runners[pid] = Runner(requests: requests[1], statuses: statuses[0])
        return pid
    }

    /// Closes a runner's input: it ends once its current item has (and is reaped then).
    private func retire(_ pid: pid_t) {
        guard let requests = runners[pid]?.requests, requests >= 0 else { return }
        close(requests)
        runners[pid]!.requests = -1
    }

    /// Reads the statuses the runners wrote and ends their items.
    private func collectStatuses() {
        for pid in Array(runners.keys) { readStatuses(of: pid) }
    }

    private func readStatuses(of pid: pid_t) {
        var buffer = [UInt8](repeating: 0, count: 256)
        while let runner = runners[pid] {
            let count = read(runner.statuses, &buffer, buffer.count)
            guard count > 0 else { return }
            runners[pid]!.partial += buffer[0..<count]
            while let newline = runners[pid]!.partial.firstIndex(of: UInt8(ascii: "\n")) {
                let text = String(decoding: runners[pid]!.partial[..<newline], as: UTF8.self)
                runners[pid]!.partial.removeSubrange(...newline)
                guard let code = Int32(text), let item = running.removeValue(forKey: pid) else { continue }
                lost.remove(pid)
                // Told to stop as the item ended: the signal may reach the runner after its
                // answer, and it would end at its next item; it gets none.
                let wasToldToStop = toldToStop.removeValue(forKey: pid) != nil
                ended(item, status: code)
                if wasToldToStop || runners[pid]!.itemsRun >= Self.itemsPerRunner { retire(pid) }
            }
        }
    }

    /// At the worker's end: every runner's input closed, and each waited for.
    private func endRunners() {
        for pid in Array(runners.keys) {
            retire(pid)
            var status: Int32 = 0
            _ = waitpid(pid, &status, 0)
            if let runner = runners.removeValue(forKey: pid) { close(runner.statuses) }
        }
    }

    /// The same open file as a descriptor above 4 (the old one closed).
    private static func moveAbove4(_ descriptor: Int32) -> Int32 {
        let moved = fcntl(descriptor, F_DUPFD_CLOEXEC, 5)
        guard moved >= 0 else { return descriptor }
        close(descriptor)
        return moved
    }

    private static func writeAll(_ bytes: [UInt8], to descriptor: Int32) -> Bool {
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            written += count
        }
        return true
    }

    private func move(_ item: WorkItem, to state: QueueFolder.State, status: Int32?) {
        do {
            guard try source.finish(item, as: state, status: status) else {
                say("lost \(item.name): another worker took it over, which resumes its run")
                return
            }
        } catch {
            say("cannot move \(item.name) to \(state.rawValue): \(error)")
        }
        if let status { worst = max(worst, status == ExitStatus.ok ? ExitStatus.ok : min(status, ExitStatus.invalid)) }
        say("\(state == .pending ? "put back" : state.rawValue) \(item.name)")
    }

    // MARK: Processes

    /// Starts `batchrun ARGUMENTS` in a process group of its own (a Ctrl-C reaches it once, from
    /// the worker), its output appended to `log` (else dropped), `descriptors` as its 3, 4, ...
    /// (a folder item's lock; a runner's requests and statuses).
    private func spawn(_ arguments: [String], log: String?, descriptors: [Int32]) -> pid_t? {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log ?? "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        for (offset, descriptor) in descriptors.enumerated() {
            posix_spawn_file_actions_adddup2(&actions, descriptor, 3 + Int32(offset))
        }
        // Nothing else of the worker's goes to the child: its store sessions' sockets (which
        // libraries may open without close-on-exec) would outlive a worker that died.
        _ = Self.addCloseFrom?(&actions, 3 + Int32(descriptors.count))
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setpgroup(&attributes, 0)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGINT)
        sigaddset(&defaults, SIGTERM)
        sigaddset(&defaults, SIGPIPE)   // ignored by the worker
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF))
        let executable = Self.executable
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        return result == 0 ? pid : nil
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which Swift's
    /// Glibc module does not declare; nil where the C library has none.
    private static let addCloseFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()

    /// This program's own binary.
    static let executable: String = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        ?? CommandLine.arguments[0]

    // MARK: Waiting and signals

    /// Sleeps until a child ends, an item arrives, a signal comes, or a quarter of a second
    /// passes (orphans of workers that died elsewhere are looked for four times a second: a
    /// dead worker's lock is gone at once, but nothing tells the others).
    private func waitForSomething() {
        var descriptors = [pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)]
        if watch >= 0 { descriptors.append(pollfd(fd: watch, events: Int16(POLLIN), revents: 0)) }
        for runner in runners.values { descriptors.append(pollfd(fd: runner.statuses, events: Int16(POLLIN), revents: 0)) }
        _ = poll(&descriptors, nfds_t(descriptors.count), 250)
        var buffer = [UInt8](repeating: 0, count: 4096)
        var stopRequested = false
        while true {
            let count = read(wake.read, &buffer, buffer.count)
            guard count > 0 else { break }
            if buffer[0..<count].contains(Self.stopByte) { stopRequested = true }
        }
        if watch >= 0 { while read(watch, &buffer, buffer.count) > 0 {} }
        if stopRequested { stop() }
    }

    /// What the signal thread writes to the wake pipe: SIGINT or SIGTERM (stop), SIGCHLD (reap).
    private static let stopByte: UInt8 = 2
    private static let childByte: UInt8 = 1

    /// SIGINT and SIGTERM stop the worker, SIGCHLD has it reap: each wakes its loop, which acts
    /// on its own thread.
    private func installSignals() {
        signal(SIGPIPE, SIG_IGN)   // a runner that died: its input's write fails instead
        let wakeWrite = wake.write
        SignalWatcher.start([SIGINT, SIGTERM, SIGCHLD]) { number in
            var byte = number == SIGCHLD ? Self.childByte : Self.stopByte
            _ = write(wakeWrite, &byte, 1)
        }
    }

    /// SIGINT or SIGTERM (seen by the loop): no new items; running ones are cancelled (their children get one
    /// SIGINT and stop after their current batch) and go back to `pending/`.
    private func stop() {
        guard !stopping else { return }
        stopping = true
        say("stopping: no new items; cancelling the running ones, which go back to pending")
        for pid in running.keys { tellToStop(pid) }
        for pid in runners.keys where running[pid] == nil { retire(pid) }
    }

    private func say(_ message: String) {
        guard !quiet else { return }
        let formatter = Date.ISO8601FormatStyle().time(includingFractionalSeconds: false)
        FileHandle.standardOutput.write(Data("\(Date().formatted(formatter))  \(message)\n".utf8))
    }
}
