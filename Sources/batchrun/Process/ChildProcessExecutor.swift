import BatchRunKit
import BatchRunRender
import BatchRunServer
import Foundation

/// Runs a worker's items in child processes, as `batchrun run ITEM --resume` would (processes,
/// not threads: an item that crashes takes nothing else with it). A folder item runs in a child
/// of its own, which is handed the item's lock, so an item is orphaned only when both the
/// worker and its child are gone. A PostgreSQL item, which holds no lock, runs in a runner
/// (`batchrun runner`): a child that runs the worker's items one after another, so a small item
/// costs no process start. A runner is replaced after `itemsPerRunner` items, so what items
/// leave in memory goes back. A run's number is its process id.
///
/// ```swift
/// let worker = Worker(queue: queue, executor: ChildProcessExecutor(jobs: 4))
/// ```
final class ChildProcessExecutor: QueueItemExecutor {
    /// `--jobs N` for each run.
    let jobs: Int?
    /// What the items may touch, handed to each run (`ItemHandoff`).
    let confinement: ItemConfinement
    /// Processes running an item (their own child, or a runner with an item in flight).
    private var busy: Set<pid_t> = []
    private var runners: [pid_t: Runner] = [:]
    /// Processes told to stop (SIGINT), until their item ends.
    private var toldToStop: Set<pid_t> = []
    /// Processes killed for not stopping in time.
    private var killed: Set<pid_t> = []
    /// Items ended since the worker last asked.
    private var endedItems: [(run: Int, status: Int32)] = []
    /// `worker --metrics`: where each run leaves its metrics (`--metrics-file`), read when it ends.
    let metrics: ItemMetricsInbox?
    private var metricsFiles: [pid_t: String] = [:]
    /// `--log-format` for each run's log.
    let logFormat: LogFormat

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

    init(jobs: Int?, confinement: ItemConfinement = ItemConfinement(), metrics: ItemMetricsInbox? = nil, logFormat: LogFormat = .text) {
        self.jobs = jobs
        self.confinement = confinement
        self.metrics = metrics
        self.logFormat = logFormat
        signal(SIGPIPE, SIG_IGN)   // a runner that died: its input's write fails instead
    }

    // MARK: QueueItemExecutor

    func start(_ item: QueueItem, wake: @escaping @Sendable () -> Void) -> Int? {
        var arguments = ["run", "--resume", "--relative-to", item.baseDirectory, "--report", item.reportPath,
                         "--no-progress", "--color", "never"]
        if let fence = item.fence { arguments += ["--fence", fence.argument] }
        if item.lock != nil { arguments += ["--progress-file", item.path + ".progress"] }   // a folder item
        if item.checkedAtSubmit { arguments.append("--checked-at-submit") }
        if let jobs { arguments += ["--jobs", String(jobs)] }
        let metricsFile = metrics?.nextPath()
        arguments += (metricsFile.map { ["--metrics-file", $0] } ?? []) + (logFormat == .json ? ["--log-format", "json"] : [])
        // The params, the confinement and a PostgreSQL item's text go off the command line.
        let handoff = ItemHandoff(params: item.params, confinement: confinement, text: item.text,
                                  identity: item.text.map { _ in item.runIdentity }, role: item.membership?.role)
        let started: pid_t?
        if let lock = item.lock {   // a folder item: its own child, handed its lock (3) and its handoff (4)
            guard let descriptor = try? handoff.unlinkedFile() else { return nil }
            defer { close(descriptor) }
            arguments += ["--handoff-descriptor", "4", "--", item.path]
            started = ChildProcess.spawn(arguments, log: item.logPath, descriptors: [lock, descriptor])
        } else {
            started = runInRunner(RunnerRequest(arguments: arguments + ["--", item.path], log: item.logPath, handoff: handoff))
        }
        guard let pid = started else { return nil }
        metricsFiles[pid] = metricsFile
        busy.insert(pid)
        return Int(pid)
    }

    func ended() -> [(run: Int, status: Int32)] {
        for pid in Array(runners.keys) { readStatuses(of: pid) }
        reap()
        for (run, _) in endedItems { metricsFiles.removeValue(forKey: pid_t(run)).map { metrics?.absorb($0) } }
        defer { endedItems = [] }
        return endedItems
    }

    /// SIGINT to the process running an item: its run stops after its current batch.
    func stop(_ run: Int) {
        let pid = pid_t(run)
        send(SIGINT, to: pid)
        toldToStop.insert(pid)
    }

    func kill(_ run: Int) {
        let pid = pid_t(run)
        killed.insert(pid)
        retire(pid)   // a runner killed takes no other item
        send(SIGKILL, to: pid)
    }

    var descriptors: [Int32] { runners.values.map(\.statuses) }

    /// Idle runners' inputs closed: they end.
    func stopTaking() {
        for pid in runners.keys where !busy.contains(pid) { retire(pid) }
    }

    /// Every runner's input closed, and each waited for.
    func shutDown() {
        for pid in Array(runners.keys) {
            retire(pid)
            var status: Int32 = 0
            _ = waitpid(pid, &status, 0)
            if let runner = runners.removeValue(forKey: pid) { close(runner.statuses) }
        }
    }

    // MARK: Children

    /// Collects ended children and their items' statuses.
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
            toldToStop.remove(pid)
            // Killed here, and not ended by itself just before.
            let killedHere = killed.remove(pid) != nil && status & 0x7f == SIGKILL
            guard busy.remove(pid) != nil else { continue }
            endedItems.append((Int(pid), Self.itemStatus(processStatus: status, ranInRunner: wasRunner, killedHere: killedHere)))
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

    // MARK: Runners

    /// Sends the item to an idle runner, started when there is none; the runner's process.
    private func runInRunner(_ request: RunnerRequest) -> pid_t? {
        guard let request = try? JSONEncoder().encode(request) else { return nil }
        let line = Array(request) + [UInt8(ascii: "\n")]
        for _ in 0..<2 {   // an idle runner may have just died: then a new one
            guard let pid = runners.first(where: { !busy.contains($0.key) && $0.value.requests >= 0 })?.key ?? startRunner()
            else { return nil }
            if ChildProcess.writeAll(line, to: runners[pid]!.requests) {
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
        if requests[0] < 5 { requests[0] = ChildProcess.moveAbove4(requests[0]) }
        if statuses[1] < 5 { statuses[1] = ChildProcess.moveAbove4(statuses[1]) }
        _ = fcntl(statuses[0], F_SETFL, O_NONBLOCK)
        let pid = ChildProcess.spawn(["runner", "--worker", String(getpid())], log: nil, descriptors: [requests[0], statuses[1]])
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

    private func readStatuses(of pid: pid_t) {
        var buffer = [UInt8](repeating: 0, count: 256)
        while let runner = runners[pid] {
            let count = read(runner.statuses, &buffer, buffer.count)
            guard count > 0 else { return }
            runners[pid]!.partial += buffer[0..<count]
            while let newline = runners[pid]!.partial.firstIndex(of: UInt8(ascii: "\n")) {
                let text = String(decoding: runners[pid]!.partial[..<newline], as: UTF8.self)
                runners[pid]!.partial.removeSubrange(...newline)
                guard let code = Int32(text), busy.remove(pid) != nil else { continue }
                // Told to stop as the item ended: the signal may reach the runner after its
                // answer, and it would end at its next item; it gets none.
                let wasToldToStop = toldToStop.remove(pid) != nil
                endedItems.append((Int(pid), code))
                if wasToldToStop || runners[pid]!.itemsRun >= Self.itemsPerRunner { retire(pid) }
            }
        }
    }
}

/// `kill(2)`, named apart from the executor's own `kill(_:)`.
private func send(_ signal: Int32, to pid: pid_t) {
    _ = kill(pid, signal)
}
