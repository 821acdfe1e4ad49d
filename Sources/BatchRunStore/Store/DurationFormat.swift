import Foundation

/// How batchrun writes a duration, in one place for every output: the text report, the HTML
/// report and the messages that quote a job file's setting.
///
/// ```swift
/// DurationFormat.seconds.string(1.234)    // "1.23s"
/// DurationFormat.compact.string(725)      // "12m 05s"
/// DurationFormat.jobFile.string(0.25)     // "250ms"
/// ```
package enum DurationFormat: Sendable {
    /// Seconds with two decimals, `1.23s`: the text report's columns.
    case seconds
    /// `4.2ms`, `1.23s`, `12m 05s`, `2h 03m`: the HTML report.
    case compact
    /// `250ms`, `5s`, `1.5s`: as a job file writes a duration.
    case jobFile

    package func string(_ seconds: Double) -> String {
        switch self {
        case .seconds:
            return String(format: "%.2fs", seconds)
        case .compact:
            if seconds < 0.01 { return String(format: "%.1fms", seconds * 1000) }
            if seconds < 60 { return String(format: "%.2fs", seconds) }
            let whole = Int(seconds.rounded())
            if whole < 3600 { return String(format: "%dm %02ds", whole / 60, whole % 60) }
            return String(format: "%dh %02dm", whole / 3600, whole % 3600 / 60)
        case .jobFile:
            return seconds < 1 ? "\(Int((seconds * 1000).rounded()))ms"
                : (seconds == seconds.rounded() ? "\(Int(seconds))s" : "\(seconds)s")
        }
    }
}
