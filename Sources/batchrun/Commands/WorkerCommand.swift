import ArgumentParser
import BatchRunKit
import Foundation

/// `batchrun worker QUEUE`: runs the items of a queue folder or of a queue in PostgreSQL.
struct WorkerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker",
        abstract: "Run the items of a queue (a folder, or postgresql://...) in order, each as `batchrun run ITEM --resume` would.",
        discussion: """
            Folder: an item is claimed by renaming it from pending/ to running/ and locked while it runs; items whose \
            worker died are taken over at once and resumed from their checkpoints. Each ends in done/ or failed/ with \
            ITEM.json (the report) and ITEM.log (the output). PostgreSQL: an item is claimed for a lease (--lease) the \
            worker renews; an item whose lease ran out is taken over and resumed; a run whose store is the queue's \
            database commits only while its lease is its worker's; each slot's items run one after another in one \
            child process. SIGINT or SIGTERM: no new items; running ones are \
            cancelled and go back to pending; exit 130.
            """)

    @Argument(help: "The queue folder (made when missing), or postgresql://USER@HOST:PORT/DB.")
    var queue: String

    @Option(help: ArgumentHelp("PostgreSQL queue: how long a claim holds an item without renewal (renewed every third of it).", valueName: "DURATION"))
    var lease = "30s"

    @Option(help: "How many items run at once.")
    var workers: Int = 1

    @Flag(help: "Work until pending/ is empty and nothing runs, then exit with the worst status of the items.")
    var once = false

    @Option(name: [.short, .long], help: "How many jobs of an item may run at once (default: the number of cores).")
    var jobs: Int?

    @Flag(name: [.short, .long], help: "Print nothing but errors.")
    var quiet = false

    @Option(name: .customLong("root"), help: ArgumentHelp("Confine every item's feeds, outputs and SQLite stores to this folder (symlinks and .. resolved; repeatable); an item that reaches outside fails as invalid.", valueName: "DIR"))
    var roots: [String] = []

    @Flag(help: "PostgreSQL queue: run the items' shell hooks (on_success, ...); without it an item with hooks fails as invalid.")
    var allowHooks = false

    @Flag(help: "Folder queue: refuse the items' shell hooks (an item with hooks fails as invalid).")
    var noHooks = false

    @Flag(help: "PostgreSQL queue: start without --root, letting items touch whatever this worker's user may.")
    var trustSubmitters = false

    func validate() throws {
        if workers < 1 { throw ValidationError("--workers must be at least 1") }
        if JobFileLoader.seconds(lease) == nil { throw ValidationError("--lease must be a duration like 500ms, 30s or 5m, found '\(lease)'") }
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1") }
    }

    func run() throws {
        let confinement: ItemConfinement
        do {
            confinement = try ItemConfinement(queue: QueueLocation(queue), roots: roots, allowHooks: allowHooks, noHooks: noHooks,
                                              trustSubmitters: trustSubmitters)
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            throw ExitCode(ExitStatus.invalid)
        }
        let opened: any Queue
        do {
            opened = try openQueue(at: queue)
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            throw ExitCode(ExitStatus.failed)
        }
        let worker = Worker(queue: opened, executor: ChildProcessExecutor(jobs: jobs, confinement: confinement),
                            options: Worker.Options(slots: workers, once: once, lease: JobFileLoader.seconds(lease) ?? 30, quiet: quiet))
        // SIGINT and SIGTERM stop the worker, SIGCHLD has it reap: each wakes its loop, which
        // acts on its own thread.
        let control = worker.control
        SignalWatcher.start([SIGINT, SIGTERM, SIGCHLD]) { number in
            if number == SIGCHLD { control.wake() } else { control.stop() }
        }
        let status = worker.run()
        if status == ExitStatus.interrupted { InterruptHandler.endBySIGINT() }
        if status != ExitStatus.ok { throw ExitCode(status) }
    }
}
