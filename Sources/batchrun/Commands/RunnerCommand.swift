import ArgumentParser
import BatchRunKit
import BatchRunServer
import Foundation

/// `batchrun runner` (hidden): a queue worker's long-lived child that runs items one after
/// another, as `batchrun run ITEM --resume ...` would, without a new process for each: the
/// worker writes one `RunnerRequest` per line to the runner's descriptor 3; the runner appends
/// the item's output to the request's log and answers with the item's exit status, a line on
/// its descriptor 4. It ends when the worker closes its end, or, when an item was interrupted
/// (SIGINT or SIGTERM), by SIGINT once that item has stopped, as `run` does; interrupted
/// between items, it ends by SIGINT at the next request, which it neither runs nor answers.
/// Its standard input is /dev/null, and hooks inherit neither descriptor.
///
/// A request carries the item's params, what the worker lets it touch, and a PostgreSQL item's
/// text and run identity (`ItemHandoff`), so nothing of the item is on a command line or in a
/// file others may read.
///
/// ```
/// {"arguments":["run","--resume","--report","/tmp/batchrun-worker-x1Yz9Q/12.3.json",...,"--","tick.yaml"],
///  "log":"/tmp/batchrun-worker-x1Yz9Q/12.log",
///  "handoff":{"params":{},"confinement":{"roots":["/srv/q"]},"text":"version: 1\n...","identity":"postgresql://db:5432/nightly#12"}}
/// ```
struct RunnerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "runner",
        abstract: "Run queue items sent by a worker, one after another (used by `batchrun worker`).",
        shouldDisplay: false)

    static let requestDescriptor: Int32 = 3
    static let statusDescriptor: Int32 = 4

    /// The worker's process id. The runner's parent at its start is not enough: a worker killed
    /// while its runner was starting left a runner whose parent was already the system's, which
    /// never saw its parent change and ran its item on, unwatched.
    @Option(help: .hidden)
    var worker: Int32?

    func run() async throws {
        for descriptor in [Self.requestDescriptor, Self.statusDescriptor] { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        let interrupts = InterruptHandler()
        interrupts.install()
        defer { withExtendedLifetime(interrupts) {} }
        let worker = worker ?? getppid()
        // The worker died before the runner started: nothing it sent is run (its items are taken over).
        if getppid() != worker { InterruptHandler.endBySIGINT() }
        Self.interruptWhenOrphaned(worker: worker)
        var requests = LineReader(descriptor: Self.requestDescriptor)
        while let line = requests.next() {
            // Interrupted while idle (a stop meant for the item before, arriving after its answer):
            // this item is not run and not answered, and the runner ends by SIGINT, so the worker
            // puts the item back. Ending by exit status 0 here once had a worker mark an item
            // `done` that never ran.
            if interrupts.interrupted { InterruptHandler.endBySIGINT() }
            // An item the interrupt cut short ends the runner by SIGINT inside `runItem`; one that
            // had ended first is answered, and the runner ends after.
            let status = if let request = try? JSONDecoder().decode(RunnerRequest.self, from: Data(line)) {
                await runItem(request, interrupts: interrupts)
            } else {
                ExitStatus.invalid   // answered all the same: the worker waits for every answer
            }
            var answer = Array("\(status)\n".utf8)
            let answered = write(Self.statusDescriptor, &answer, answer.count) == answer.count
            if interrupts.interrupted { InterruptHandler.endBySIGINT() }
            guard answered else { return }   // the worker is gone
        }
    }

    /// A worker killed outright (SIGKILL, a crash) leaves its runner to the system: the runner
    /// then interrupts itself, as a SIGINT from its worker would, so the item it was running
    /// stops at once (its statement cancelled, its open batch rolled back) instead of running on
    /// unwatched until its lease is taken over. Checked every `Backoff.checkInterval`.
    private static func interruptWhenOrphaned(worker: Int32) {
        Thread.detachNewThread {
            Backoff.wait(.infinity, until: { getppid() != worker })
            kill(getpid(), SIGINT)
        }
    }

    /// One item: its output to its log (descriptors 1 and 2), its exit status returned.
    private func runItem(_ request: RunnerRequest, interrupts: InterruptHandler) async -> Int32 {
        let log = open(request.log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard log >= 0 else { return ExitStatus.failed }
        dup2(log, 1)
        dup2(log, 2)
        close(log)
        defer {
            fflush(nil)   // what print() buffered, into this item's log
            let null = open("/dev/null", O_WRONLY)
            dup2(null, 1)
            dup2(null, 2)
            close(null)
        }
        let command: RunCommand
        do {
            guard let parsed = try BatchRunCommand.parsedCommand(request.arguments) as? RunCommand else { return ExitStatus.invalid }
            command = parsed
        } catch {
            // As `batchrun run` with these arguments would: a usage error is exit status 2.
            return BatchRunCommand.report(CommandFailure(located: BatchRunCommand.fullMessage(for: error), status: ExitStatus.invalid))
        }
        do {
            try await command.run(interrupts: interrupts, handoff: request.handoff)
            return ExitStatus.ok
        } catch let error as any BatchRunError {
            return BatchRunCommand.report(error)
        } catch let failure as CommandFailure {
            return BatchRunCommand.report(failure)
        } catch {
            if error is ExitCode { return BatchRunCommand.exitCode(for: error).rawValue }
            return BatchRunCommand.report(CommandFailure(located: BatchRunCommand.fullMessage(for: error),
                                                         status: BatchRunCommand.exitCode(for: error).rawValue))
        }
    }
}

/// One item for a runner: the arguments of its `batchrun run`, the file its output goes to, and
/// what the worker hands it off the command line (`ItemHandoff`; none: the arguments say all).
struct RunnerRequest: Codable {
    var arguments: [String]
    var log: String
    var handoff: ItemHandoff?
}
