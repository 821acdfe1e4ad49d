import ArgumentParser
import BatchRunKit
import Foundation

/// `batchrun worker QUEUE`: runs a queue folder's items.
struct WorkerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker",
        abstract: "Run the items of a queue folder in name order, each as `batchrun run ITEM --resume` would.",
        discussion: """
            An item is claimed by renaming it from pending/ to running/ and locked while it runs; items whose worker \
            died are taken over at once and resumed from their checkpoints. Each ends in done/ or failed/ with ITEM.json \
            (the report) and ITEM.log (the output). SIGINT or SIGTERM: no new items; running ones are cancelled and go \
            back to pending/; exit 130.
            """)

    @Argument(help: "The queue folder (made when missing).")
    var queue: String

    @Option(help: "How many items run at once.")
    var workers: Int = 1

    @Flag(help: "Work until pending/ is empty and nothing runs, then exit with the worst status of the items.")
    var once = false

    @Option(name: [.short, .long], help: "How many jobs of an item may run at once (default: the number of cores).")
    var jobs: Int?

    @Flag(name: [.short, .long], help: "Print nothing but errors.")
    var quiet = false

    func validate() throws {
        if workers < 1 { throw ValidationError("--workers must be at least 1") }
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1") }
    }

    func run() throws {
        let folder = try QueueFolder(path: queue)
        // Kept alive past `run()`: its signal handlers hold it weakly.
        let worker = QueueWorker(queue: folder, workers: workers, once: once, jobs: jobs, quiet: quiet)
        let status = withExtendedLifetime(worker) { worker.run() }
        if status == ExitStatus.interrupted { InterruptHandler.endBySIGINT() }
        if status != ExitStatus.ok { throw ExitCode(status) }
    }
}
