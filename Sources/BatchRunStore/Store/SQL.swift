/// Small helpers to write SQL text safely: identifiers are always quoted.
package enum SQL {
    /// `"name"` with inner quotes doubled.
    package static func quote(_ identifier: String) -> String {
        if !identifier.utf8.contains(UInt8(ascii: "\"")) { return "\"" + identifier + "\"" }
        return "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    package static func quoteList(_ identifiers: [String]) -> String {
        identifiers.map(quote).joined(separator: ", ")
    }

    /// `'text'` with inner quotes doubled: a string literal.
    package static func literal(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }
}
