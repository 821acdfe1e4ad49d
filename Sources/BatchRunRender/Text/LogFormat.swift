import BatchRunKit
import Foundation

/// How `run` and `worker` write their lines: `text` for people (the default), `json` for log
/// collectors: one object a line with `ts`, `level`, `event`, `item`, `job`, `rows`, `message`.
package enum LogFormat: String, Sendable, CaseIterable {
    case text, json

    /// One JSON line (ending in a newline): absent fields are null.
    package static func jsonLine(level: String, event: String, item: String? = nil, job: String? = nil, rows: Int? = nil,
                                 message: String, at date: Date = Date()) -> String {
        let formatter = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        func quoted(_ text: String?) -> String { text.map(Self.quote) ?? "null" }
        return "{\"ts\":\(quote(date.formatted(formatter))),\"level\":\(quote(level)),\"event\":\(quote(event)),"
            + "\"item\":\(quoted(item)),\"job\":\(quoted(job)),\"rows\":\(rows.map(String.init) ?? "null"),"
            + "\"message\":\(quote(message))}\n"
    }

    /// `text` as a JSON string (the library's one escaping of JSON text).
    package static func quote(_ text: String) -> String { JSONText.string(text) }
}
