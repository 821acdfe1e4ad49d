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
        while !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(100))
            if Task.isCancelled { break }
            let now = Date()
            let live = run.liveProgress()
            var parts: [String] = []
            for (job, rows) in live {
                if let last = previous[job], now.timeIntervalSince(last.at) >= 0.5 {
                    rates[job] = Double(rows - last.rows) / now.timeIntervalSince(last.at)
                    previous[job] = (rows, now)
                } else if previous[job] == nil {
                    previous[job] = (rows, now)
                }
                let rate = rates[job].map { " (\(Self.number(Int($0.rounded())))/s)" } ?? ""
                parts.append("\(job) \(Self.number(rows)) rows\(rate)")
            }
            drawProgress(parts.isEmpty ? "" : "running: " + parts.joined(separator: " · "))
        }
        drawProgress("")
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
