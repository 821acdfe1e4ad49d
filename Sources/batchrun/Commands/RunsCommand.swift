import ArgumentParser
import BatchRunKit
import BatchRunRender
import Foundation

/// `batchrun runs FILE`: the runs of a job file on its store, newest first.
struct RunsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "runs",
        abstract: "List the runs of a job file on its store, newest first, with each job's run time.")

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, json
    }

    @Argument(help: "The job file.", completion: .file(extensions: ["yaml", "yml"]))
    var file: String

    @Option(help: "How many runs to list.")
    var limit: Int = 20

    @Option(help: "Output format: text or json.")
    var format: Format = .text

    @OptionGroup var load: LoadOptions

    func validate() throws {
        if limit < 1 { throw ValidationError("--limit must be at least 1") }
    }

    func run() throws {
        let file = try load.loadAll([file])[0]
        let runs: [RunSummary]
        do {
            let store = try Store(file.store, model: file.model)
            runs = try JobFileRun.history(of: file, in: store, limit: limit)
        } catch {
            throw CommandFailure("\(file.path): \(error)", status: ExitStatus.failed)
        }
        switch format {
        case .json:
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(runs), as: UTF8.self))
        case .text:
            guard !runs.isEmpty else {
                print("no runs of \(file.path) on \(file.store.path) yet")
                return
            }
            var rows = [["run", "started", "status", "run", "rows", "resumed from", "jobs"]]   // jobs last: it is long
            for run in runs {
                let total = run.rows.fetched + run.rows.inserted + run.rows.updated + run.rows.deleted
                let jobs = run.jobs.map { "\($0.name) " + ($0.doneEarlier ? "done earlier" : DurationFormat.seconds.string($0.runSeconds)) }
                rows.append([String(run.id), DateText.text(run.startedAt), run.status.rawValue, run.elapsedSeconds.map(DurationFormat.seconds.string) ?? "-",
                             ReportPrinter.number(total), run.resumedFrom.map(String.init) ?? "", jobs.joined(separator: " · ")])
            }
            print(ReportPrinter.table(rows, rightAligned: 3...5))
        }
    }
}
