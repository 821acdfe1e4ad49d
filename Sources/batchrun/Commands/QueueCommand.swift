import ArgumentParser
import BatchRunKit
import BatchRunRender
import Foundation

/// `batchrun queue QUEUE`: what a queue holds.
struct QueueCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queue",
        abstract: "List a queue's items by state (pending, scheduled, retryable, running, done, failed, cancelled) and its schedules: running ones with their process, job and rows so far, scheduled and retryable ones with their time and attempts.",
        discussion: "--html FILE.html also writes the listing as one self-contained page (finished items with their run's status, time and rows). --log ID and --report ID print one item's output instead; they, --format json and --html are the same for a queue folder and a PostgreSQL queue.")

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, json
    }

    @Argument(help: "The queue folder, or postgresql://USER@HOST:PORT/DB.", completion: .directory)
    var queue: String

    @Option(help: "Output format: text or json.")
    var format: Format = .text

    @Option(help: ArgumentHelp("Also write the listing as one self-contained HTML page.", valueName: "FILE.html"))
    var html: String?

    @Option(help: ArgumentHelp("Print this item's output (its log, every attempt's). ID as `queue` lists it: a folder item's file name, a PostgreSQL item's id.", valueName: "ID"))
    var log: String?

    @Option(help: ArgumentHelp("Print this item's JSON report (once a run of it ended).", valueName: "ID"))
    var report: String?

    @Option(help: ArgumentHelp("Print this fan-out batch alone: its parts by state, rows so far, its completion (the JSON object of the listing's \"batches\" with --format json).", valueName: "ID"))
    var batch: Int64?

    func run() throws {
        // A folder that is not a queue is not made one by listing it.
        if case .folder(let path) = QueueLocation(queue), !FileManager.default.fileExists(atPath: path + "/pending") {
            throw CommandFailure("\(queue) is not a queue folder (no pending/)", status: ExitStatus.invalid)
        }
        let opened = try WorkerCommand.orExit(ExitStatus.failed) { try openQueue(at: queue) }
        if let id = log ?? report {
            guard let output = try WorkerCommand.orExit(ExitStatus.failed, "", { try opened.output(of: id) }) else {
                throw CommandFailure("no item \(id) in \(opened.location) (name it as `batchrun queue` lists it)", status: ExitStatus.invalid)
            }
            print(log != nil ? output.log : output.report ?? "{}", terminator: log != nil ? "" : "\n")
            return
        }
        if let batch {
            let batches = try WorkerCommand.orExit(ExitStatus.failed) { try opened.batches() }
            guard let found = batches.first(where: { $0.id == batch }) else {
                throw CommandFailure("no batch \(batch) in \(opened.location) (`batchrun queue` lists its batches)", status: ExitStatus.invalid)
            }
            print(try format == .json ? QueueText.json(found) : "batch " + QueueText.batch(found))
            return
        }
        let snapshot = try WorkerCommand.orExit(ExitStatus.failed) { try opened.snapshot() }
        if let html {
            try WorkerCommand.orExit(ExitStatus.failed, "cannot write \(html): ") {
                try HTMLReport.write(QueueHTMLPage(listing: snapshot, queue: opened).render(), to: html)
            }
        }
        print(try format == .json ? QueueText.json(snapshot) : QueueText.render(snapshot))
    }
}
