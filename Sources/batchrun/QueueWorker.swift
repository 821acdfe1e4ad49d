import BatchRunKit
import Foundation

/// Runs the items of a queue (a folder or a PostgreSQL queue: its `WorkSource`), each as a
/// `batchrun run ITEM --resume` child process (processes, not threads: an item that crashes or
/// leaks takes nothing else with it, and each item's memory goes back when it ends). A folder
/// item's lock is handed to its child, so an item is orphaned only when both the worker and
/// its child are gone; a PostgreSQL item's lease is renewed while its child runs.
final class QueueWorker {
    let source: any WorkSource
    let workers: Int
    let once: Bool
    let jobs: Int?
    let quiet: Bool
    private var running: [pid_t: WorkItem] = [:]
    private var worst: Int32 = ExitStatus.ok
    private var stopping = false
    private let wake: (read: Int32, write: Int32)
    private var watch: Int32 = -1
    private var nextRenewal = Date.distantFuture
    /// Running items whose lease was lost (their runs were told to stop).
    private var lost: Set<pid_t> = []

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
            reap()
            renewLeases()
            let isStopping = stopping
            if !isStopping {
                while running.count < workers, let claim = claimNext() { start(claim) }
            }
            if running.isEmpty && (isStopping || once) { break }
            waitForSomething()
        }
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
        guard let pid = spawn(arguments, log: item.logPath, lock: item.lock) else {
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
        for (pid, item) in running where !lost.contains(pid) && lostItems.contains(where: { $0.path == item.path }) {
            say("lost the lease of \(item.name): another worker takes it over; stopping its run")
            lost.insert(pid)
            kill(pid, SIGINT)
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
        // A report of this run is kept; one left by an earlier, cancelled attempt is replaced.
        if let data = FileManager.default.contents(atPath: path), let kept = try? JSONDecoder().decode(RecordedRun.self, from: data),
           kept.runID == report.runID { return }
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
            guard let item = running.removeValue(forKey: pid) else { continue }
            lost.remove(pid)
            let signalled = status & 0x7f != 0 && status & 0x7f != 0x7f
            let code = signalled ? 128 + (status & 0x7f) : (status >> 8) & 0xff
            switch code {
            case ExitStatus.ok:
                move(item, to: .done, status: code)
            case ExitStatus.interrupted, 128 + SIGTERM:
                move(item, to: .pending, status: nil)   // resumes next time
            default:
                move(item, to: .failed, status: code)
            }
        }
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
    /// the worker), its output appended to `log`, a folder item's lock as its descriptor 3.
    private func spawn(_ arguments: [String], log: String, lock: Int32?) -> pid_t? {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        if let lock { posix_spawn_file_actions_adddup2(&actions, lock, 3) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setpgroup(&attributes, 0)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGINT)
        sigaddset(&defaults, SIGTERM)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF))
        let executable = Self.executable
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        return result == 0 ? pid : nil
    }

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
        for pid in running.keys { kill(pid, SIGINT) }
    }

    private func say(_ message: String) {
        guard !quiet else { return }
        let formatter = Date.ISO8601FormatStyle().time(includingFractionalSeconds: false)
        FileHandle.standardOutput.write(Data("\(Date().formatted(formatter))  \(message)\n".utf8))
    }
}
