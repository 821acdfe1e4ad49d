import ArgumentParser
import BatchRunKit
import BatchRunRender
import Foundation

/// `batchrun queue QUEUE`: what a queue folder holds.
struct QueueCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queue",
        abstract: "List a queue folder's pending, running, done and failed items (running ones with their process, job and rows so far).",
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
            do {
                try HTMLReport.write(QueueHTMLPage(listing: listing, queue: folder).render(), to: html)
            } catch {
                FileHandle.standardError.write(Data("error: cannot write \(html): \(error.localizedDescription)\n".utf8))
                throw ExitCode(ExitStatus.failed)
            }
        }
        switch format {
        case .json:
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(listing), as: UTF8.self))
        case .text:
            let counts = QueueItemState.allCases.map { "\($0.rawValue) \(listing.counts[$0.rawValue] ?? 0)" }
            print("\(listing.queue): " + counts.joined(separator: " · "))
            for state in QueueItemState.allCases {
                let items = listing.items.filter { $0.state == state }
                guard !items.isEmpty else { continue }
                print("\n\(state.rawValue)/")
                for item in items {
                    var line = "  \(item.name)"
                    if state == .running {
                        if item.orphaned == true { line += "  orphaned: its worker is gone; the next worker takes it over" }
                        if let process = item.process { line += "  process \(process)" }
                        if let jobs = item.jobs, !jobs.isEmpty { line += "  running \(jobs.joined(separator: ", "))" }
                        if let rows = item.rows { line += "  \(ReportPrinter.number(rows)) rows so far" }
                    }
                    if let error = item.error { line += "  error: \(error)" }
                    print(line)
                }
            }
        }
    }

    /// A PostgreSQL queue's items, or one item's log or report.
    private func listPostgres() throws {
        let postgres: PostgresQueue
        do {
            if html != nil { throw ValidationError("--html is for queue folders") }
            postgres = try PostgresQueue(url: queue)
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            throw ExitCode(ExitStatus.failed)
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
        let counts = QueueItemState.allCases.map { state in (state.rawValue, items.filter { $0.state == state }.count) }
        switch format {
        case .json:
            struct Listing: Encodable {
                var queue: String
                var counts: [String: Int]
                var items: [PostgresQueue.Item]
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            let listing = Listing(queue: postgres.location, counts: Dictionary(counts, uniquingKeysWith: +), items: items)
            print(String(decoding: try encoder.encode(listing), as: UTF8.self))
        case .text:
            print("\(postgres.location): " + counts.map { "\($0.0) \($0.1)" }.joined(separator: " · "))
            for state in QueueItemState.allCases {
                let listed = items.filter { $0.state == state }
                guard !listed.isEmpty else { continue }
                print("\n\(state.rawValue)")
                for item in listed {
                    var line = "  \(item.id)  \(item.name)"
                    if state == .running {
                        if let worker = item.worker { line += "  worker \(worker)" }
                        if let left = item.leaseLeft {
                            line += left > 0 ? "  lease \(Int(left.rounded(.up)))s left" : "  lease ran out: the next worker takes it over"
                        }
                    }
                    if item.attempts > 1 { line += "  attempt \(item.attempts)" }
                    if let error = item.error { line += "  error: \(error)" }
                    print(line)
                }
            }
        }
    }
}
