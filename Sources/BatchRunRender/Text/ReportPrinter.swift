import BatchRunKit
import Foundation
import Synchronization

/// Prints a run as it goes (a line as each job starts and ends, in the spirit of dbt) and at
/// the end (the timing table, the conflict report and one summary line).
package final class ReportPrinter: Sendable {
    package let style: TerminalStyle
    package let quiet: Bool
    package let verbose: Bool
    package let conflictLimit: Int
    /// Draw a live progress line (on a terminal only).
    package let showsProgress: Bool
    /// Whether a progress line is on screen, so the next line first clears it.
    let output = Mutex(false)
    /// `json`: one JSON object a line instead of the text (no progress line, no tables).
    package let logFormat: LogFormat

    package init(style: TerminalStyle, quiet: Bool, verbose: Bool, conflictLimit: Int, showsProgress: Bool = false,
                 logFormat: LogFormat = .text) {
        self.style = style
        self.quiet = quiet
        self.verbose = verbose
        self.conflictLimit = conflictLimit
        self.showsProgress = showsProgress && logFormat == .text
        self.logFormat = logFormat
    }

    package func event(_ event: JobFileRun.Event) {
        if logFormat == .json { return jsonEvent(event) }
        switch event {
        case .jobStarted(let name, let index, let total):
            guard !quiet else { return }
            line("\(Self.clock())  [\(index)/\(total)] START \(Self.dotted(name)) [RUN]")
        case .jobFinished(let job, let index, let total):
            if quiet && job.status == .ok { return }
            let word: String
            switch job.status {
            case .ok: word = style.green("OK   ")
            case .failed: word = style.red("ERROR")
            case .timedOut: word = style.red("TIME ")
            case .cancelled: word = style.yellow("CANCL")
            case .skipped: word = style.yellow("SKIP ")
            }
            var text = "\(Self.clock())  [\(index)/\(total)] \(word) \(Self.dotted(job.name)) [\(Self.summary(job))]"
            if let error = job.error { text += "\n" + style.red("    error: ") + error }
            line(text)
        case .hookFailed(let job, let hook, let message):
            line(style.yellow("warning: ") + "\(hook) hook of job \(job) \(message)", toError: true)
        case .progress:
            break   // the progress line polls the run instead, at most ten times a second
        case .retrying(let job, let reason):
            if !quiet { line(style.yellow("  retrying") + " a batch of \(job): \(reason)") }
        case .startingOver(let job, let reason):
            line(style.yellow("  starting over") + " job \(job): \(reason)")
        case .limitReached(let message):
            line(style.red("error: ") + message + "; the item was stopped", toError: true)
        }
    }

    package func resuming(_ continuation: RunContinuation) {
        guard !quiet else { return }
        if logFormat == .json { return json(event: "run_resumed", message: "resuming run \(continuation.runID)") }
        line("resuming run \(continuation.runID)" + (continuation.params.isEmpty ? "" : " with its params "
            + continuation.params.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")))
    }

    /// A schema change made before the jobs started: `schema: Person: added column score real default 1.5`.
    package func schemaChanged(_ change: SchemaChange) {
        guard !quiet else { return }
        if logFormat == .json { return json(event: "schema_changed", message: "\(change)") }
        line("schema: \(change)")
    }

    package func fileHeader(_ file: JobFile) {
        guard !quiet else { return }
        if logFormat == .json { return json(event: "file_started", message: file.path) }
        line("\n== \(file.path)")
    }

    /// A line about something that went on beside the run and changed nothing of it; `event`
    /// names it in JSON lines.
    package func warning(_ message: String, event: String) {
        if logFormat == .json { return json(level: "warning", event: event, message: message) }
        line(style.yellow("warning: ") + message, toError: true)
    }

    package func error(_ message: String) {
        if logFormat == .json { return json(level: "error", event: "error", message: message) }
        line(style.red("error: ") + message, toError: true)
    }

    /// Errors that say where they are (`FILE:LINE:COLUMN: error: ...`, the line, a caret), as they are.
    package func locatedErrors(_ text: String) {
        if logFormat == .json { return json(level: "error", event: "error", message: text) }
        line(text, toError: true)
    }

    package func finalReport(_ report: RunReport) {
        if logFormat == .json { return jsonFinalReport(report) }
        if !quiet {
            line("")
            line(timingTable(report.jobs))
            line("")
            line(conflictSection(report))
        }
        line(summaryLine(report))
    }

    // MARK: Pieces

    package static func summary(_ job: JobReport) -> String {
        switch job.status {
        case .skipped: return "needs \(job.skippedBecause ?? "a job that did not succeed")"
        case .cancelled where job.runSeconds == 0: return "cancelled before it started"
        case .ok where job.resumed != nil: return "done earlier"
        default: break
        }
        var parts: [String] = []
        let rows = job.rows
        if rows.inserted > 0 { parts.append("inserted \(number(rows.inserted))") }
        if rows.updated > 0 { parts.append("updated \(number(rows.updated))") }
        if rows.deleted > 0 { parts.append("deleted \(number(rows.deleted))") }
        if rows.fetched > 0 { parts.append("fetched \(number(rows.fetched))") }
        // A step that did nothing still says what it was for: `inserted 0`, not `fetched 0`.
        let verbs: [StepKind: String] = [.insert: "inserted", .batchUpdate: "updated", .delete: "deleted", .fetch: "fetched"]
        for step in job.steps {
            guard let verb = verbs[step.kind], !parts.contains(where: { $0.hasPrefix(verb + " ") }) else { continue }
            parts.append("\(verb) 0")
        }
        if parts.isEmpty { parts.append("fetched 0") }
        if rows.rejected > 0 { parts.append("rejected \(number(rows.rejected))") }
        var conflicts = "\(number(job.conflicts)) conflict" + (job.conflicts == 1 ? "" : "s")
        if job.steps.contains(where: { step in step.conflictRecords.indices.contains { step.conflictRecords.outcome(at: $0) == .failed } }) {
            conflicts += ", failed"
        }
        // Connections to the server lost and made again, when there were any.
        if job.reconnects > 0 { conflicts += " · \(number(job.reconnects)) reconnect" + (job.reconnects == 1 ? "" : "s") }
        return parts.joined(separator: " · ") + " · \(conflicts) in \(DurationFormat.seconds.string(job.runSeconds))"
    }

    package func timingTable(_ jobs: [JobReport]) -> String {
        var rows = [["job", "status", "queued", "run", "fetched", "inserted", "updated", "deleted", "batches", "conflicts"]]
        for job in jobs {
            rows.append([job.name, job.resumed ?? job.status.rawValue, DurationFormat.seconds.string(job.queuedSeconds), DurationFormat.seconds.string(job.runSeconds),
                         Self.number(job.rows.fetched), Self.number(job.rows.inserted), Self.number(job.rows.updated),
                         Self.number(job.rows.deleted), Self.number(job.batches.committed), Self.number(job.conflicts)])
            if verbose {
                for step in job.steps {
                    rows.append(["  \(step.kind.rawValue) \(step.entity)", "", "", DurationFormat.seconds.string(step.runSeconds),
                                 Self.number(step.rows.fetched), Self.number(step.rows.inserted), Self.number(step.rows.updated),
                                 Self.number(step.rows.deleted), Self.number(step.batches.committed), Self.number(step.conflicts)])
                }
            }
        }
        return Self.table(rows, rightAligned: 2...)
    }

    /// The conflicts counted per job, entity, kind and outcome, in the order each group first
    /// appears; from each conflict's summary, no record built (the text and HTML reports).
    package static func conflictCounts(_ conflicts: ConflictRecords) -> [(group: [String], count: Int)] {
        var counts: [[String]: Int] = [:]
        var order: [[String]] = []
        for index in conflicts.indices {
            let summary = conflicts.summary(at: index)
            let group = [summary.job, summary.entity, summary.kind.rawValue, summary.outcome.rawValue]
            if counts[group] == nil { order.append(group) }
            counts[group, default: 0] += 1
        }
        return order.map { ($0, counts[$0]!) }
    }

    /// Counts per job, entity, kind and outcome, then the first `--conflicts N` conflicts,
    /// one line per property.
    package func conflictSection(_ report: RunReport) -> String {
        let total = max(report.conflicts.count, report.jobs.map(\.conflicts).reduce(0, +))
        guard total > 0 else { return "conflicts: none" }
        var lines = ["conflicts: \(Self.number(total))"]
        var summary = [["job", "entity", "kind", "outcome", "count"]]
        for (group, count) in Self.conflictCounts(report.conflicts) { summary.append(group + [Self.number(count)]) }
        lines.append(Self.indent(Self.table(summary, rightAligned: 4...)))
        let shown = report.conflicts.prefix(conflictLimit)
        if !shown.isEmpty {
            lines.append("")
            lines.append(shown.count < report.conflicts.count
                ? "first \(shown.count) of \(Self.number(report.conflicts.count)) (--conflicts N for more; the JSON report has all):"
                : "every conflict:")
            var rows = [["job", "entity", "key", "kind", "outcome", "changed by", "property", "original", "store", "ours", "resolved"]]
            for record in shown {
                let key = record.key.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
                let head = [record.job, record.entity, key, record.kind.rawValue, record.outcome.rawValue, record.changedBy]
                if record.properties.isEmpty { rows.append(head + ["", "", "", "", ""]) }
                for property in record.properties {
                    rows.append(head + [property.name, property.original.description, property.store.description,
                                        property.ours.description, property.resolved.description])
                }
            }
            lines.append(Self.indent(Self.table(rows, rightAligned: 99...)))
        }
        return lines.joined(separator: "\n")
    }

    package static func indent(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { "  " + $0 }.joined(separator: "\n")
    }

    package func summaryLine(_ report: RunReport) -> String {
        let count = { (status: JobStatus) in report.jobs.filter { $0.status == status }.count }
        let text = "Done in \(DurationFormat.seconds.string(report.elapsedSeconds)). OK=\(count(.ok)) ERROR=\(count(.failed)) "
            + "TIMED_OUT=\(count(.timedOut)) SKIP=\(count(.skipped)) CANCELLED=\(count(.cancelled)) TOTAL=\(report.jobs.count)"
        switch report.status {
        case .ok: return style.green(text)
        case .failed: return style.red(text)
        case .cancelled: return style.yellow(text)
        }
    }

    // MARK: Formatting

    package static func table<Columns: RangeExpression<Int>>(_ rows: [[String]], rightAligned: Columns) -> String {
        let widths = (0..<rows[0].count).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { index, cell in
                let pad = String(repeating: " ", count: widths[index] - cell.count)
                return rightAligned.contains(index) ? pad + cell : cell + pad
            }.joined(separator: "  ").trimmingTrailingSpaces()
        }.joined(separator: "\n")
    }

    package static func dotted(_ name: String, width: Int = 32) -> String {
        name + " " + String(repeating: ".", count: max(3, width - name.count))
    }

    package static func number(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var result = ""
        for (index, character) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { result += "," }
            result.append(character)
        }
        return (value < 0 ? "-" : "") + result
    }

    /// Local wall-clock time, `HH:MM:SS`.
    package static func clock() -> String {
        var now = time(nil)
        var parts = tm()
        localtime_r(&now, &parts)
        return String(format: "%02d:%02d:%02d", parts.tm_hour, parts.tm_min, parts.tm_sec)
    }

    func line(_ text: String, toError: Bool = false) {
        output.withLock { onScreen in
            if onScreen {
                FileHandle.standardOutput.write(Data("\r\u{1B}[K".utf8))
                onScreen = false
            }
            (toError ? FileHandle.standardError : FileHandle.standardOutput).write(Data((text + "\n").utf8))
        }
    }
}

extension String {
    package func trimmingTrailingSpaces() -> String {
        var result = self
        while result.last == " " { result.removeLast() }
        return result
    }
}
