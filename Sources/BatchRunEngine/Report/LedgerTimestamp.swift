import Foundation

/// The run ledger's timestamps, `2026-11-26T03:00:00.125Z` (UTC, milliseconds): written and read
/// here only, so a time read back prints exactly as it was recorded.
///
/// ```swift
/// let text = LedgerTimestamp.string(Date())          // "2026-11-26T03:00:00.125Z"
/// LedgerTimestamp.string(LedgerTimestamp.date(text)!) == text   // true
/// ```
package enum LedgerTimestamp {
    /// The date to the nearest millisecond (Foundation's ISO 8601 style truncates, so a parsed
    /// `.611` could print as `.610`).
    package static func string(_ date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded())
        var seconds = time_t(milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000)
        let fraction = Int32(milliseconds - Int64(seconds) * 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
                      parts.tm_hour, parts.tm_min, parts.tm_sec, fraction)
    }

    /// The date a ledger timestamp names (with or without milliseconds), or nil.
    package static func date(_ text: String) -> Date? {
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) { return date }
        return try? Date(text, strategy: Date.ISO8601FormatStyle())
    }
}
