import ArgumentParser
import BatchRunKit
import BatchRunRender
import Foundation

/// `batchrun queue QUEUE`: what a queue holds.
struct QueueCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queue",
        abstract: "List a queue's items by state (pending, scheduled, retryable, running, done, failed, cancelled) and its schedules: running ones with their process, job and rows so far, scheduled and retryable ones with their time and attempts.",
        discussion: "--html FILE.html also writes the listing as one self-contained page (finished items with their run's status, time and rows).")

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, json
    }

    @Argument(help: "The queue folder, or postgresql://USER@HOST:PORT/DB.")
    var queue: String

    @Option(help: "Output format: text or json.")
    var format: Format = .text

    @Option(help: ArgumentHelp("Also write the listing as one self-contained HTML page.", valueName: "FILE.html"))
    var html: String?

    @Option(help: ArgumentHelp("PostgreSQL queue: print this item's output (its log), all attempts.", valueName: "ID"))
    var log: Int64?

    @Option(help: ArgumentHelp("PostgreSQL queue: print this item's JSON report.", valueName: "ID"))
    var report: Int64?

    func run() throws {
        if case .database = QueueLocation(queue) { return try listPostgres() }
        if log != nil || report != nil {
            FileHandle.standardError.write(Data("error: --log and --report are for a queue in PostgreSQL; a folder keeps them as ITEM.log and ITEM.json\n".utf8))
            throw ExitCode(ExitStatus.invalid)
        }
        guard FileManager.default.fileExists(atPath: queue + "/pending") else {
            FileHandle.standardError.write(Data("error: \(queue) is not a queue folder (no pending/)\n".utf8))
            throw ExitCode(ExitStatus.invalid)
        }
        let folder = try QueueFolder(path: queue)
        let listing = QueueListing(of: folder)
        if let html {
            try WorkerCommand.orExit(ExitStatus.failed, "cannot write \(html): ") {
                try HTMLReport.write(QueueHTMLPage(listing: listing, queue: folder).render(), to: html)
            }
        }
        print(try format == .json ? QueueText.json(listing) : QueueText.render(listing))
    }

    /// A PostgreSQL queue's items, or one item's log or report.
    private func listPostgres() throws {
        let postgres = try WorkerCommand.orExit(ExitStatus.failed) {
            if html != nil { throw ValidationError("--html is for queue folders") }
            return try PostgresQueue(url: queue)
        }
        if let id = log ?? report {
            guard let output = try postgres.output(of: id) else {
                FileHandle.standardError.write(Data("error: no item \(id) in \(postgres.location)\n".utf8))
                throw ExitCode(ExitStatus.invalid)
            }
            print(log != nil ? output.log : output.report ?? "{}", terminator: log != nil ? "" : "\n")
            return
        }
        let items = try postgres.items()
        let schedules = ((try? postgres.schedules()) ?? []).map { QueueScheduleListing($0) }   // a submit-only role may not read them
        print(try format == .json ? QueueText.json(items, location: postgres.location, schedules: schedules)
            : QueueText.render(items, location: postgres.location, schedules: schedules))
    }
}
