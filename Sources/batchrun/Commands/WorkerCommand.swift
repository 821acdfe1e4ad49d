import ArgumentParser
import BatchRunKit
import BatchRunRender
import BatchRunServer
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

    @Argument(help: "The queue folder (made when missing), or postgresql://USER@HOST:PORT/DB.", completion: .directory)
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

    @Flag(help: "PostgreSQL queue, or a worker with --root: run the items' shell hooks (on_success, ...), which have this worker's user's rights; without it an item with hooks fails as invalid.")
    var allowHooks = false

    @Flag(help: "Folder queue: refuse the items' shell hooks (an item with hooks fails as invalid).")
    var noHooks = false

    @Flag(help: "PostgreSQL queue: start without --root, letting items touch whatever this worker's user may.")
    var trustSubmitters = false

    @Option(name: .customLong("allow-env"), help: ArgumentHelp("Confined worker: let items read this environment variable with ${env.NAME} (repeatable); no other is visible to them.", valueName: "NAME"))
    var allowedEnvironment: [String] = []

    @Option(name: .customLong("allow-store"), help: ArgumentHelp("Confined worker: let items use this store besides the queue's own database and SQLite files in the --root folders (repeatable).", valueName: "URL|PATH"))
    var allowedStores: [String] = []

    @Option(help: ArgumentHelp("Confined worker: run items' SQL on PostgreSQL as this role (SET ROLE), so they read and write only what it may; batchrun's own run state stays the worker's.", valueName: "ROLE"))
    var itemRole: String?

    @Option(name: .customLong("allow-host"), help: ArgumentHelp("Confined worker: let items' feeds and outputs reach this host although its address is loopback, link-local or private (repeatable; without :PORT every port).", valueName: "HOST[:PORT]"))
    var allowedHosts: [String] = []

    @Option(help: ArgumentHelp("Confined worker: end an item that runs longer than this as failed.", valueName: "DURATION"))
    var maxItemTime: String?

    @Option(help: ArgumentHelp("Confined worker: end an item that reads or writes more rows than this as failed.", valueName: "N"))
    var maxRows: Int64?

    @Option(help: ArgumentHelp("Confined worker: end an item that reads or writes more bytes than this (like 500MB or 2GiB) as failed.", valueName: "SIZE"))
    var maxBytes: String?

    @Option(help: ArgumentHelp("Serve Prometheus metrics at http://HOST:PORT/metrics; loopback unless HOST says otherwise (0.0.0.0 exposes them to the network).", valueName: "HOST:PORT"))
    var metrics: String?

    @Option(help: "Lines as text (the default) or json: one object a line (ts, level, event, item, job, rows, message).")
    var logFormat: LogFormat = .text

    @Option(help: ArgumentHelp("Prune done items that ended longer ago than this (like 14d), once a minute, beside the work (batchrun prune).", valueName: "DURATION"))
    var keep: String?

    func validate() throws {
        if let keep, JobFileLoader.seconds(keep) == nil { throw ValidationError("--keep must be a duration like 12h or 14d, found '\(keep)'") }
        if workers < 1 { throw ValidationError("--workers must be at least 1") }
        if JobFileLoader.seconds(lease) == nil { throw ValidationError("--lease must be a duration like 500ms, 30s or 5m, found '\(lease)'") }
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1") }
        do { _ = try allowed() } catch { throw ValidationError(error.message) }
        if let metrics, ListenAddress(metrics) == nil { throw ValidationError("--metrics takes HOST:PORT, like 127.0.0.1:9464") }
    }

    func run() throws {
        let confinement = try Self.orExit(ExitStatus.invalid) {
            try ItemConfinement(queue: QueueLocation(queue), roots: roots, allowHooks: allowHooks, noHooks: noHooks,
                                trustSubmitters: trustSubmitters, allowed: allowed())
        }
        let opened = try Self.orExit(ExitStatus.failed) { try openQueue(at: queue) }
        let exporter = try Self.orExit(ExitStatus.failed, "cannot serve metrics on \(metrics ?? ""): ") {
            try metrics.flatMap(ListenAddress.init).map(WorkerMetricsServer.start(listen:))
        }
        defer { exporter?.stop() }
        var options = Worker.Options(slots: workers, once: once, lease: JobFileLoader.seconds(lease) ?? 30, quiet: quiet)
        options.publishesQueueCounts = exporter != nil
        options.keep = keep.flatMap(JobFileLoader.seconds)
        let worker = Worker(queue: opened, executor: ChildProcessExecutor(jobs: jobs, confinement: confinement, metrics: exporter?.inbox,
                                                                          logFormat: logFormat), options: options)
        if logFormat == .json { worker.logLine = JSONLog.write }
        if let exporter, !quiet { JSONLog.say("metrics at \(exporter.url)", event: "metrics_listening", json: logFormat == .json) }
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

    /// What `--allow-*`, `--item-role` and `--max-*` let a confined worker's items reach.
    func allowed() throws(ItemConfinementError) -> ConfinedItemRules {
        try ConfinedItemRules(allowEnv: allowedEnvironment, allowStores: allowedStores, itemRole: itemRole, allowHosts: allowedHosts,
                              maxItemTime: maxItemTime, maxRows: maxRows, maxBytes: maxBytes)
    }

    /// `body`'s value; its error thrown as a `CommandFailure` (after `prefix`) with exit status `status`.
    static func orExit<T>(_ status: Int32, _ prefix: String = "", _ body: () throws -> T) throws -> T {
        do { return try body() } catch {
            throw CommandFailure(prefix + (error is CocoaError ? error.localizedDescription : "\(error)"), status: status)
        }
    }
}
