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

    /// `text` as a JSON string: quotes, backslashes and control characters escaped.
    package static func quote(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                result += String(format: "\\u%04x", scalar.value)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
