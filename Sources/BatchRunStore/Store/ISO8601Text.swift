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

    /// Microseconds since 1970-01-01T00:00:00Z of a valid text (`isValid`) whose instant is
    /// plain: a zone (`Z`, `±HH`, `±HHMM`, `±HH:MM`, up to 15:59), or none when `zonelessIsUTC` (a date
    /// alone is its midnight), at most 6 digits of a second, no leap second, a day its month
    /// has, a year from 1. Nil for any other, whose reading is the database's (a session's time
    /// zone, rounding, an error): PostgreSQL's binary COPY sends only the plain ones.
    ///
    /// ```swift
    /// ISO8601Text.unixMicroseconds("2000-01-01T00:00:00.5+01:00", zonelessIsUTC: false)   // 946_681_200_500_000
    /// ISO8601Text.unixMicroseconds("2026-02-30", zonelessIsUTC: true)                      // nil
    /// ```
    package static func unixMicroseconds(_ text: String, zonelessIsUTC: Bool) -> Int64? {
        var text = text
        return text.withUTF8 { unixMicroseconds($0, zonelessIsUTC: zonelessIsUTC) }
    }

    package static func unixMicroseconds(_ b: UnsafeBufferPointer<UInt8>, zonelessIsUTC: Bool) -> Int64? {
        guard isValid(b) else { return nil }
        func number(_ start: Int, _ count: Int) -> Int64 {
            var value: Int64 = 0
            for i in start..<(start + count) { value = value * 10 + Int64(b[i] &- 48) }
            return value
        }
        let year = number(0, 4), month = number(5, 2), day = number(8, 2)
        guard year >= 1, day <= DateText.daysIn(month, of: year) else { return nil }
        var seconds: Int64 = 0, fraction: Int64 = 0
        var i = 10
        if b.count > 10 {
            seconds = number(11, 2) * 3600 + number(14, 2) * 60
            i = 16
            if i < b.count && b[i] == UInt8(ascii: ":") {
                let second = number(i + 1, 2)
                guard second < 60 else { return nil }
                seconds += second
                i += 3
                if i < b.count && b[i] == UInt8(ascii: ".") {
                    i += 1
                    var digits = 0
                    while i < b.count && b[i] >= 48 && b[i] <= 57 {
                        guard digits < 6 else { return nil }
                        fraction = fraction * 10 + Int64(b[i] - 48)
                        digits += 1
                        i += 1
                    }
                    for _ in digits..<6 { fraction *= 10 }
                }
            }
        }
        var offset: Int64 = 0
        if i == b.count {
            guard zonelessIsUTC else { return nil }
        } else if b[i] != UInt8(ascii: "Z") {
            let sign: Int64 = b[i] == UInt8(ascii: "-") ? -1 : 1
            let rest = b.count - (i + 3)
            let hours = number(i + 1, 2), minutes = rest == 0 ? 0 : number(b.count - 2, 2)
            guard hours <= 15, minutes < 60 else { return nil }   // PostgreSQL's limits on a zone's offset
            offset = sign * (hours * 3600 + minutes * 60)
        }
        let days = DateText.daysFromCivil(year, month, day)
        return ((days * 86_400 + seconds - offset) * 1_000_000) + fraction
    }
}
