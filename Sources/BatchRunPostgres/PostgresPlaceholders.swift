#if PostgreSQL
import BatchRunStore

/// SQL text with the store's placeholders (`?` by position, `:name` by name, as SQLite takes
/// them) turned into PostgreSQL's `$1`, `$2`, ...: string literals, quoted identifiers,
/// comments, dollar-quoted strings and `::` casts are left as they are, and each name gets one
/// number however often it appears.
///
/// ```swift
/// let text = PostgresPlaceholders("SELECT * FROM t WHERE a = ? AND b = :b OR c = :b")
/// // text.sql == "SELECT * FROM t WHERE a = $1 AND b = $2 OR c = $2"
/// // text.parameters == [.position(0), .name("b")]
/// ```
package struct PostgresPlaceholders: Equatable {
    package enum Parameter: Equatable {
        /// The `n`th `?` (from 0).
        case position(Int)
        case name(String)
    }

    package let sql: String
    /// What `$1`, `$2`, ... take, in order.
    package let parameters: [Parameter]

    /// With `keepingOffsets`, a `:name` is replaced by `$n` padded with spaces to its own
    /// length, so an offset the server reports in `sql` is the same in `text`.
    package init(_ text: String, keepingOffsets: Bool = false) {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count + 8)
        var parameters: [Parameter] = []
        var numbers: [String: Int] = [:]
        var positional = 0
        let bytes = Array(text.utf8)
        var index = 0
        func copy(until end: Int) {
            out.append(contentsOf: bytes[index..<min(end, bytes.count)])
            index = min(end, bytes.count)
        }
        func isNameByte(_ byte: UInt8) -> Bool {
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x5F || byte >= 0x80
        }
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "'"), UInt8(ascii: "\""):
                // A literal or quoted identifier; a doubled quote inside it is an escaped one.
                var end = index + 1
                while end < bytes.count {
                    if bytes[end] == byte {
                        if end + 1 < bytes.count && bytes[end + 1] == byte { end += 2; continue }
                        break
                    }
                    end += 1
                }
                copy(until: end + 1)
            case UInt8(ascii: "-") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "-"):
                var end = index
                while end < bytes.count && bytes[end] != UInt8(ascii: "\n") { end += 1 }
                copy(until: end)
            case UInt8(ascii: "/") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "*"):
                var end = index + 2
                while end + 1 < bytes.count && !(bytes[end] == UInt8(ascii: "*") && bytes[end + 1] == UInt8(ascii: "/")) { end += 1 }
                copy(until: end + 2)
            case UInt8(ascii: "$"):
                // A dollar-quoted string ($$...$$ or $tag$...$tag$), else a $n already there.
                var tagEnd = index + 1
                while tagEnd < bytes.count && isNameByte(bytes[tagEnd]) && !(bytes[tagEnd] >= 0x30 && bytes[tagEnd] <= 0x39 && tagEnd == index + 1) {
                    tagEnd += 1
                }
                if tagEnd < bytes.count && bytes[tagEnd] == UInt8(ascii: "$") {
                    let tag = Array(bytes[index...tagEnd])
                    var end = tagEnd + 1
                    while end + tag.count <= bytes.count && Array(bytes[end..<(end + tag.count)]) != tag { end += 1 }
                    copy(until: end + tag.count)
                } else {
                    copy(until: index + 1)
                }
            case UInt8(ascii: "?"):
                parameters.append(.position(positional))
                positional += 1
                out.append(contentsOf: Array("$\(parameters.count)".utf8))
                index += 1
            case UInt8(ascii: ":"):
                if index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: ":") {
                    copy(until: index + 2)   // a cast
                } else if index + 1 < bytes.count && isNameByte(bytes[index + 1]) && !(bytes[index + 1] >= 0x30 && bytes[index + 1] <= 0x39) {
                    var end = index + 1
                    while end < bytes.count && isNameByte(bytes[end]) { end += 1 }
                    let name = String(decoding: bytes[(index + 1)..<end], as: UTF8.self)
                    let number: Int
                    if let known = numbers[name] {
                        number = known
                    } else {
                        parameters.append(.name(name))
                        number = parameters.count
                        numbers[name] = number
                    }
                    let replacement = Array("$\(number)".utf8)
                    out.append(contentsOf: replacement)
                    if keepingOffsets && replacement.count < end - index {
                        out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: end - index - replacement.count))
                    }
                    index = end
                } else {
                    copy(until: index + 1)
                }
            default:
                copy(until: index + 1)
            }
        }
        sql = String(decoding: out, as: UTF8.self)
        self.parameters = parameters
    }

    /// The values for `$1`, `$2`, ... from the statement's arguments (a missing `?` is NULL; a
    /// missing `:name` throws `StoreError.missingParameter`).
    package func values(positional: [StoreValue], named: [String: StoreValue]) throws -> [StoreValue] {
        try parameters.map { parameter in
            switch parameter {
            case .position(let index): return index < positional.count ? positional[index] : .null
            case .name(let name):
                guard let value = named[name] else { throw StoreError.missingParameter(name) }
                return value
            }
        }
    }
}
#endif
