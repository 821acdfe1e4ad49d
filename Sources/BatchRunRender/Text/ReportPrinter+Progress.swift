import BatchRunKit
import Foundation
import Synchronization

/// The live progress line: each running job's rows so far and rate, redrawn in place on a
/// terminal; every other line the printer writes clears it first.
extension ReportPrinter {
    /// Redraws the progress line at most ten times a second until cancelled.
    package func tickProgress(_ run: JobFileRun) async {
        var previous: [String: (rows: Int, at: Date)] = [:]
        var rates: [String: Double] = [:]
        /// When each job's fraction was first seen, and what it was then (a resumed step starts past 0).
        var firstSeen: [String: (fraction: Double, at: Date)] = [:]
        while !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(100))
            if Task.isCancelled { break }
            let now = Date()
            let live = run.liveProgress()
            let fractions = run.liveFractions()
            var jobs: [JobProgress] = []
            for (job, rows) in live {
                if let last = previous[job], now.timeIntervalSince(last.at) >= 0.5 {
                    rates[job] = Double(rows - last.rows) / now.timeIntervalSince(last.at)
                    previous[job] = (rows, now)
                } else if previous[job] == nil {
                    previous[job] = (rows, now)
                }
                var progress = JobProgress(job: job, rows: rows, rate: rates[job], fraction: fractions[job])
                if let fraction = fractions[job] {
                    let first = firstSeen[job] ?? (fraction, now)
                    firstSeen[job] = first
                    if fraction > first.fraction + 0.001 {
                        progress.secondsLeft = now.timeIntervalSince(first.at) * (1 - fraction) / (fraction - first.fraction)
                    }
                }
                jobs.append(progress)
            }
            drawProgress(Self.progressLine(jobs, width: Self.terminalWidth()))
        }
        drawProgress("")
    }

    /// What the progress line says of one running job.
    package struct JobProgress: Sendable {
        package var job: String
        package var rows: Int
        package var rate: Double?
        /// Bytes of its feeds read of their size (0...1); nil when no feed says how much is to come.
        package var fraction: Double?
        package var secondsLeft: Double?

        package init(job: String, rows: Int, rate: Double? = nil, fraction: Double? = nil, secondsLeft: Double? = nil) {
            self.job = job
            self.rows = rows
            self.rate = rate
            self.fraction = fraction
            self.secondsLeft = secondsLeft
        }
    }

    /// `running: load 23.8% [████░░░░░░░░░░░░] 103,200 rows (16,105/s, 20s left) · stats 1,200 rows`:
    /// each job's percent done, rows, rate and time left; a bar for each job with a percent when
    /// the line, bars and all, fits in `width`.
    package static func progressLine(_ jobs: [JobProgress], width: Int) -> String {
        guard !jobs.isEmpty else { return "" }
        func line(bars: Bool) -> String {
            "running: " + jobs.map { job in
                var text = job.job
                if let fraction = job.fraction {
                    text += String(format: " %.1f%%", fraction * 100)
                    if bars {
                        let filled = Int((fraction * 16).rounded(.down))
                        text += " [" + String(repeating: "█", count: filled) + String(repeating: "░", count: 16 - filled) + "]"
                    }
                }
                text += " \(number(job.rows)) rows"
                var details: [String] = []
                if let rate = job.rate { details.append("\(number(Int(rate.rounded())))/s") }
                if let left = job.secondsLeft { details.append("\(DurationFormat.compact.string(left)) left") }
                if !details.isEmpty { text += " (" + details.joined(separator: ", ") + ")" }
                return text
            }.joined(separator: " · ")
        }
        let withBars = line(bars: true)
        return withBars.count < width ? withBars : line(bars: false)
    }

    /// Replaces the progress line (an empty text just clears it).
    package func drawProgress(_ text: String) {
        let width = Self.terminalWidth()
        let shown = text.count > width - 1 ? String(text.prefix(width - 2)) + "…" : text
        output.withLock { onScreen in
            guard onScreen || !shown.isEmpty else { return }
            FileHandle.standardOutput.write(Data(("\r\u{1B}[K" + shown).utf8))
            onScreen = !shown.isEmpty
        }
    }

    package static func terminalWidth() -> Int {
        var size = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        return 80
    }
}
