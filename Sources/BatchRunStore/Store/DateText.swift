import Foundation

/// The one way a date becomes text and back: ISO 8601 in UTC with milliseconds,
/// `2026-01-31T08:15:00.000Z`, for stored values (`StoreValue(Date)`, a record's `Date`, a typed
/// filter's operand), the run ledger's times (`runs` prints them as recorded) and
/// `_batchrun_schema`'s `applied_at`. Formatted and parsed without Foundation's format styles
/// for the years 0001-9999 (record inserts format one per date property per row). The
/// milliseconds are the nearest to the date (Foundation's style truncates them), so a date made
/// from a text (`Date(timeIntervalSince1970: 1_769_847_300.728)`, whose double lies just below
/// .728) gives that text back. Text written earlier reads back: Foundation's ISO 8601 with or
/// without a fraction (the ledger's times before `DateText` wrote them).
///
/// ```swift
/// DateText.text(Date(timeIntervalSince1970: 0.5))   // "1970-01-01T00:00:00.500Z"
/// DateText.date("2026-11-26T03:00:00.125Z")         // the date, to the millisecond
/// ```
package enum DateText {
    /// The text of `date`: `standardText`, or for other years Foundation's ISO 8601 text.
    package static func text(_ date: Date) -> String {
        standardText(date) ?? date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    /// The text of a date of the years 0001-9999, in the one form `ColumnType.datetime` takes
    /// without parsing it again; nil for other years (`text(_:)` gives theirs).
    package static func standardText(_ date: Date) -> String? {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        guard abs(milliseconds) < 253_402_300_800_000 else { return nil }   // years 0001-9999 only
        let total = Int64(milliseconds)
        var days = total / 86_400_000
        var inDay = total % 86_400_000
        if inDay < 0 { inDay += 86_400_000; days -= 1 }
        guard let (year, month, day) = civil(days), (1...9999).contains(year) else { return nil }
        let hour = inDay / 3_600_000, minute = inDay / 60_000 % 60, second = inDay / 1000 % 60, millisecond = inDay % 1000
        return String(unsafeUninitializedCapacity: 24) { bytes in
            // Two digits at a time, unrolled (a loop of divisions cost a record insert 380 instructions).
            func two(_ value: Int64, _ at: Int) {
                let tens = value / 10
                bytes[at] = UInt8(truncatingIfNeeded: 48 + tens)
                bytes[at + 1] = UInt8(truncatingIfNeeded: 48 + value - tens * 10)
            }
            two(year / 100, 0); two(year % 100, 2); bytes[4] = 45; two(month, 5); bytes[7] = 45; two(day, 8); bytes[10] = 84
            two(hour, 11); bytes[13] = 58; two(minute, 14); bytes[16] = 58; two(second, 17); bytes[19] = 46
            bytes[20] = UInt8(truncatingIfNeeded: 48 + millisecond / 100); two(millisecond % 100, 21); bytes[23] = 90
            return 24
        }
    }

    /// The date of `text`: ISO 8601 `YYYY-MM-DD`, optionally followed by `T` (or a space),
    /// `HH:MM:SS`, a fraction of up to nine digits, and `Z` or `±HH:MM` (no zone is UTC), read
    /// here in the proleptic Gregorian calendar, as `text(_:)` writes; any other form as
    /// Foundation's ISO 8601 parser reads it (`StoreValue.parseDate`).
    package static func date(_ text: String) -> Date? {
        if let date = writtenDate(text) { return date }
        return StoreValue.parseDate(text)
    }

    /// The date of `text` in the forms `date(_:)` reads itself, nil for any other: never
    /// Foundation's ISO 8601 parser, which loads ICU's calendar and time zones (about 1.8 MB
    /// more resident in `serve`, which reads published progress every second).
    package static func writtenDate(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { b -> Date? in
            func number(_ at: Int, _ width: Int) -> Int64? {
                guard at + width <= b.count else { return nil }
                var value: Int64 = 0
                for index in at..<(at + width) {
                    guard b[index] >= 48, b[index] <= 57 else { return nil }
                    value = value * 10 + Int64(b[index] - 48)
                }
                return value
            }
            func byte(_ index: Int, is expected: UInt8) -> Bool { index < b.count && b[index] == expected }
            guard b.count >= 10, byte(4, is: 45), byte(7, is: 45), let year = number(0, 4), let month = number(5, 2),
                  let day = number(8, 2), (1...12).contains(month), day >= 1, day <= daysIn(month, of: year) else { return nil }
            var seconds = daysFromCivil(year, month, day) * 86_400
            var fraction: Int64 = 0, scale: Int64 = 1
            var index = 10
            if b.count > 10 {
                guard b[10] == 84 || b[10] == 32, byte(13, is: 58), byte(16, is: 58), let hour = number(11, 2),
                      let minute = number(14, 2), let second = number(17, 2), hour < 24, minute < 60, second < 60 else { return nil }
                seconds += (hour * 60 + minute) * 60 + second
                index = 19
                if byte(19, is: 46) {
                    index = 20
                    while index < b.count, b[index] >= 48, b[index] <= 57 {
                        guard scale < 1_000_000_000 else { return nil }
                        fraction = fraction * 10 + Int64(b[index] - 48)
                        scale *= 10
                        index += 1
                    }
                    guard scale > 1 else { return nil }
                }
                if byte(index, is: 90) {
                    index += 1
                } else if byte(index, is: 43) || byte(index, is: 45), byte(index + 3, is: 58), let hours = number(index + 1, 2),
                          let minutes = number(index + 4, 2), hours < 24, minutes < 60 {
                    let offset = (hours * 60 + minutes) * 60
                    seconds -= b[index] == 43 ? offset : -offset
                    index += 6
                }
            }
            guard index == b.count else { return nil }
            // Milliseconds (or coarser) in one rounding, of a whole number exact in a double:
            // the date `text(_:)` was given.
            if scale <= 1000 { return Date(timeIntervalSince1970: Double(seconds * scale + fraction) / Double(scale)) }
            return Date(timeIntervalSince1970: Double(seconds) + Double(fraction) / Double(scale))
        }
    }

    /// `YYYY-MM-DD` of the day `days` after 1970-01-01 (as SQLite's `date()` writes a day);
    /// nil outside the years 0001-9999.
    ///
    /// ```swift
    /// DateText.day(daysSince1970: -1)   // "1969-12-31"
    /// ```
    package static func day(daysSince1970 days: Int64) -> String? {
        standardText(Date(timeIntervalSince1970: Double(days) * 86_400)).map { String($0.prefix(10)) }
    }

    /// The days of `month` in `year` of the proleptic Gregorian calendar.
    package static func daysIn(_ month: Int64, of year: Int64) -> Int64 {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Howard Hinnant's civil-from-days: the proleptic Gregorian date `days` after 1970-01-01.
    private static func civil(_ days: Int64) -> (Int64, Int64, Int64)? {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date (the inverse of `civil`).
    package static func daysFromCivil(_ year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}
