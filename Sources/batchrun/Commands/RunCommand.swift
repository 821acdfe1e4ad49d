import ArgumentParser
import BatchRunKit
import BatchRunRender
import BatchRunServer
import Foundation

/// `batchrun [run] FILE...`: runs the jobs of each file, one file after another.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the jobs of one or more job files (several files run one after another).")

    @Argument(help: "Job files to run, in order.", completion: .file(extensions: ["yaml", "yml"]))
    var files: [String]

    @Option(name: [.short, .long], help: "How many jobs may run at once (default: the number of cores).")
    var jobs: Int = ProcessInfo.processInfo.activeProcessorCount

    @Option(name: .customLong("select"), help: ArgumentHelp("Run only these jobs: NAME, NAME+ (and what comes after it), +NAME (and what it needs); repeatable.", valueName: "SEL"),
            completion: ShellCompletion.jobNames)
    var select: [String] = []

    @Option(name: .customLong("exclude"), help: ArgumentHelp("Leave these jobs out (same forms as --select); repeatable.", valueName: "SEL"),
            completion: ShellCompletion.jobNames)
    var exclude: [String] = []

    @Flag(help: "Cancel everything at the first failure.")
    var failFast = false

    @Flag(help: "Continue the latest run of each file if it did not end ok (cancelled, failed, or its process died), from its checkpoints; otherwise start a new run.")
    var resume = false

    @Flag(help: "Make no schema change: a store that lacks a declared column, index or unique is an error (exit 2), left as it is.")
    var noSchemaChanges = false

    @OptionGroup var load: LoadOptions

    @Option(help: ArgumentHelp("Write the JSON report here (a folder when several files run).", valueName: "FILE.json"))
    var report: String?

    @Option(help: ArgumentHelp("Write the report as one self-contained HTML page (with several files, one section per file).",
                               valueName: "FILE.html"))
    var html: String?

    @Option(help: "How many conflicts to list in the text report.")
    var conflicts: Int = 20

    @Flag(name: [.short, .long], help: "Print only errors and the summary line.")
    var quiet = false

    @Flag(name: [.short, .long], help: "Also print per-step timings.")
    var verbose = false

    @Flag(help: "Do not draw the live progress line.")
    var noProgress = false

    @Option(help: "Colour: auto, always or never (NO_COLOR is respected).")
    var color: ColorMode = .auto

    @Option(help: ArgumentHelp("Write the run's metrics here at the end, in Prometheus' text format (atomically).", valueName: "FILE.prom"))
    var metricsFile: String?

    @Option(help: "Lines as text (the default) or json: one object a line (ts, level, event, item, job, rows, message).")
    var logFormat: LogFormat = .text

    /// `ITEM:TOKEN:LEASE:QUEUE-URL`, given by a PostgreSQL queue's worker: when the store is the
    /// queue's database, every write commits only while the item's claim is this token
    /// (docs/postgresql.md, the queue).
    @Option(help: .hidden)
    var fence: String?

    /// A queue folder's worker: the descriptor its `ItemHandoff` is read from (params, what the
    /// item may touch), so that nothing of the item is on the command line.
    @Option(help: .hidden)
    var handoffDescriptor: Int32?

    /// A queue folder's worker: where this run publishes its progress once a second (`batchrun serve` reads it).
    @Option(help: .hidden)
    var progressFile: String?

    func validate() throws {
        if jobs < 1 { throw ValidationError("--jobs must be at least 1") }
        if let fence, QueueFence(argument: fence) == nil { throw ValidationError("--fence takes ITEM:TOKEN:LEASE:QUEUE-URL") }
        if conflicts < 0 { throw ValidationError("--conflicts must be 0 or more") }
        if quiet && verbose { throw ValidationError("--quiet and --verbose cannot be used together") }
    }

    func run() async throws {
        let interrupts = InterruptHandler()
        interrupts.install()
        defer { withExtendedLifetime(interrupts) {} }
        let handoff = try handoffDescriptor.map { descriptor in
            do { return try ItemHandoff.read(from: descriptor) } catch {
                throw CommandFailure("cannot read the item's handoff from descriptor \(descriptor): \(error)", status: ExitStatus.invalid)
            }
        }
        try await run(interrupts: interrupts, handoff: handoff)
    }

    /// Runs the files; SIGINT and SIGTERM come through `interrupts`, installed by the caller (a
    /// queue's runner installs one for all the items it runs). A queue item's `handoff` gives its
    /// params, what it may touch and a PostgreSQL item's text (its one file argument then only
    /// names it).
    func run(interrupts: InterruptHandler, handoff: ItemHandoff? = nil) async throws {
        let params = handoff?.params ?? load.paramValues
        let loaded = try load.loadAll(files, selection: JobSelection(select: select, exclude: exclude), handoff: handoff)
        if metricsFile != nil { MetricsExport.start() }
        let style = TerminalStyle(mode: logFormat == .json ? .never : color)
        let printer = ReportPrinter(style: style, quiet: quiet, verbose: verbose, conflictLimit: conflicts,
                                    showsProgress: style.isTerminal && !noProgress && !quiet, logFormat: logFormat)
        var worst = ExitStatus.ok
        var results: [HTMLReport.Section] = []
        var statuses: [RunReport.Status] = []
        var skippedFiles = false
        for var file in loaded {
            if interrupts.interrupted {
                skippedFiles = true
                break
            }
            let opened: RunOpening
            do {
                opened = try RunOpening.open(file, resume: resume, fence: fence.flatMap(QueueFence.init(argument:)),
                                             params: params, allowingSchemaChanges: !noSchemaChanges) { params in
                    try load.loadAll([file.path], selection: JobSelection(select: select, exclude: exclude), params: params, handoff: handoff)[0]
                }
            } catch let error as RunOpeningError {
                if error.isLocated { printer.locatedErrors("\(error)\nnothing was run") } else { printer.error("\(file.path): \(error)\nnothing was run") }
                // Tables that do not match the job file, or a run that cannot be continued, make the
                // file invalid for this store; a store that cannot be opened (locked, full, read-only,
                // not a database) is a failed run.
                worst = max(worst, error.isInvalid ? ExitStatus.invalid : ExitStatus.failed)
                continue
            }
            file = opened.file
            var store: Store? = opened.store
            let continuation = opened.continuation
            if loaded.count > 1 { printer.fileHeader(file) }
            for applied in opened.schemaChanges { printer.schemaChanged(applied.change) }
            if let continuation { printer.resuming(continuation) }
            let run = opened.makeRun(maxConcurrent: jobs, failFast: failFast, params: params)
            interrupts.watch(run)
            let ticker = printer.showsProgress ? Task { [run] in await printer.tickProgress(run) } : nil
            let publisher = ItemProgress.publisher(run, file: progressFile, fence: fence.flatMap(QueueFence.init(argument:)))
            let result = await run.run { event in printer.event(event) }
            ticker?.cancel()
            await ticker?.value
            publisher?.cancel()
            await publisher?.value
            interrupts.watch(nil)
            printer.finalReport(result)
            if let destination = reportPath(for: file, count: loaded.count) {
                do {
                    try result.writeJSON(to: destination)
                } catch {
                    printer.error("could not write the report \(destination): \(error.localizedDescription)")
                    worst = max(worst, ExitStatus.failed)
                }
            }
            statuses.append(result.status)
            worst = max(worst, result.status == .ok ? ExitStatus.ok : ExitStatus.failed)
            if html != nil {
                let earlier = (try? JobFileRun.history(of: file, in: store!, limit: 21)) ?? []
                results.append(HTMLReport.Section(report: result, history: JobFileRun.earlierRuns(than: result.runID, in: earlier)))
            }
            // Closed before the next file, or the process's end (SQLite: the WAL into the file).
            _ = consume run
            _ = consume opened
            // Interrupted: a feed's reader may be blocked on a stalled read, and Ctrl-C ends promptly.
            let wait = interrupts.interrupted ? 0.25 : 2
            if await !Store.release(&store, waitingUpTo: wait) && verbose {
                printer.warning("\(file.path): the store was still in use \(wait) s after the run ended and was left open"
                                + " (an SQLite store's -wal file then stays beside it until the store is next opened)", event: "store_left_open")
            }
        }
        if let html, !results.isEmpty {
            do {
                try HTMLReport(sections: results).write(to: html)
            } catch {
                printer.error("could not write the HTML report \(html): \(error.localizedDescription)")
                worst = max(worst, ExitStatus.failed)
            }
        }
        do { try metricsFile.map(MetricsExport.writeAndReset(to:)) } catch {
            printer.error("could not write the metrics \(metricsFile ?? ""): \(error.localizedDescription)")
            worst = max(worst, ExitStatus.failed)
        }
        if Self.endsBySIGINT(interrupted: interrupts.interrupted, statuses: statuses, skippedFiles: skippedFiles) {
            InterruptHandler.endBySIGINT()
        }
        if worst != ExitStatus.ok { throw ExitCode(worst) }
    }

    /// After SIGINT or SIGTERM the process ends by SIGINT (status 130, so `make` stops too) when
    /// the signal cut the work short: a run it cancelled, or a file it kept from running. A
    /// signal that came once every run had ended changes nothing, and the status is the runs',
    /// as their recorded state says: a queue worker then moves the item to done instead of
    /// putting it back to run again. `statuses`: of the runs that ran.
    static func endsBySIGINT(interrupted: Bool, statuses: [RunReport.Status], skippedFiles: Bool) -> Bool {
        interrupted && (skippedFiles || statuses.contains(.cancelled))
    }

    /// `--report FILE.json` for one file; with several, `--report FOLDER` gets `NAME.json` each.
    func reportPath(for file: JobFile, count: Int) -> String? {
        guard let report else { return nil }
        if count == 1 { return report }
        let name = URL(fileURLWithPath: file.path).deletingPathExtension().lastPathComponent
        return URL(fileURLWithPath: report).appendingPathComponent(name + ".json").path
    }
}
