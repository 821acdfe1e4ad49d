import ArgumentParser
import BatchRunKit
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

    @Argument(help: "The queue folder.")
    var queue: String

    @Option(help: "Output format: text or json.")
    var format: Format = .text

    @Option(help: ArgumentHelp("Also write the listing as one self-contained HTML page.", valueName: "FILE.html"))
    var html: String?

    func run() throws {
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
            let counts = QueueFolder.State.allCases.map { "\($0.rawValue) \(listing.counts[$0.rawValue] ?? 0)" }
            print("\(listing.queue): " + counts.joined(separator: " · "))
            for state in QueueFolder.State.allCases {
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
}
