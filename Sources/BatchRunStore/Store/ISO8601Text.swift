/// The ISO 8601 text a `datetime` column holds, checked without a formatter (feeds check every
/// field with it, and object writes every value).
///
/// ```swift
/// ISO8601Text.isValid("2026-01-31T08:15:00.250Z")   // true
/// ISO8601Text.isValid("31/01/2026")                 // false
/// ```
package enum ISO8601Text {
    /// `YYYY-MM-DD`, optionally `T` or space, `HH:MM[:SS[.fff]]`, optionally `Z` or `±HH:MM`.
    package static func isValid(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { isValid($0) }
    }

    package static func isValid(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        func digits(_ start: Int, _ count: Int) -> Int? {
            guard start + count <= b.count else { return nil }
            var value = 0
            for i in start..<(start + count) {
                guard b[i] >= 48 && b[i] <= 57 else { return nil }
                value = value * 10 + Int(b[i] - 48)
            }
            return value
        }
        guard let _ = digits(0, 4), b.count >= 10, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"),
              let month = digits(5, 2), let day = digits(8, 2), (1...12).contains(month), (1...31).contains(day)
        else { return false }
        if b.count == 10 { return true }
        guard b[10] == UInt8(ascii: "T") || b[10] == UInt8(ascii: " "), let hour = digits(11, 2), hour < 24,
              b.count >= 16, b[13] == UInt8(ascii: ":"), let minute = digits(14, 2), minute < 60 else { return false }
        var i = 16
        if i < b.count && b[i] == UInt8(ascii: ":") {
            guard let second = digits(i + 1, 2), second < 61 else { return false }
            i += 3
            if i < b.count && b[i] == UInt8(ascii: ".") {
                i += 1
                let start = i
                while i < b.count && b[i] >= 48 && b[i] <= 57 { i += 1 }
                if i == start { return false }
            }
        }
        if i == b.count { return true }
        if b[i] == UInt8(ascii: "Z") { return i + 1 == b.count }
        if b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
            guard digits(i + 1, 2) != nil else { return false }
            let rest = b.count - (i + 3)
            if rest == 0 { return true }
            if rest == 3 { return b[i + 3] == UInt8(ascii: ":") && digits(i + 4, 2) != nil }
            if rest == 2 { return digits(i + 3, 2) != nil }
        }
        return false
    }
}
