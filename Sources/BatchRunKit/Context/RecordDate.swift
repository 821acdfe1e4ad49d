import Foundation

/// Dates of records as the store keeps them (`StoreValue(Date)`'s ISO 8601 text in UTC with
/// milliseconds, `2026-01-31T08:15:00.000Z`), formatted and parsed without Foundation's
/// format styles: record inserts format one per date property per row.
enum RecordDate {
    /// The text of `date`, the same as `StoreValue(date)`'s.
    static func text(_ date: Date) -> String {
        standardText(date) ?? StoreValue.formatDate(date)
    }

    /// The text of a date of the years 0001-9999, in the one form `ColumnType.datetime` takes
    /// without parsing it again; nil for other years (`text(_:)` gives theirs).
    static func standardText(_ date: Date) -> String? {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded(.down)
        guard abs(milliseconds) < 253_402_300_800_000 else { return nil }   // years 0001-9999 only
        let total = Int64(milliseconds)
        var days = total / 86_400_000
        var inDay = total % 86_400_000
        if inDay < 0 { inDay += 86_400_000; days -= 1 }
        guard let (year, month, day) = civil(days), (1...9999).contains(year) else { return nil }
        let hour = inDay / 3_600_000, minute = inDay / 60_000 % 60, second = inDay / 1000 % 60, millisecond = inDay % 1000
        return String(unsafeUninitializedCapacity: 24) { bytes in
            func put(_ value: Int64, _ at: Int, _ width: Int) {
                var value = value
                for index in stride(from: at + width - 1, through: at, by: -1) {
                    bytes[index] = UInt8(48 + value % 10)
                    value /= 10
                }
            }
            put(year, 0, 4); bytes[4] = 45; put(month, 5, 2); bytes[7] = 45; put(day, 8, 2); bytes[10] = 84
            put(hour, 11, 2); bytes[13] = 58; put(minute, 14, 2); bytes[16] = 58; put(second, 17, 2); bytes[19] = 46
            put(millisecond, 20, 3); bytes[23] = 90
            return 24
        }
    }

    /// The date of `text` in exactly the form `text(_:)` writes; anything else as `StoreValue.date` reads it.
    static func date(_ text: String) -> Date? {
        var text = text
        let fast: Date?? = text.withUTF8 { b -> Date?? in
            guard b.count == 24, b[4] == 45, b[7] == 45, b[10] == 84, b[13] == 58, b[16] == 58, b[19] == 46, b[23] == 90 else { return nil }
            func number(_ at: Int, _ width: Int) -> Int64? {
                var value: Int64 = 0
                for index in at..<(at + width) {
                    guard b[index] >= 48, b[index] <= 57 else { return nil }
                    value = value * 10 + Int64(b[index] - 48)
                }
                return value
            }
            guard let year = number(0, 4), let month = number(5, 2), let day = number(8, 2), let hour = number(11, 2),
                  let minute = number(14, 2), let second = number(17, 2), let millisecond = number(20, 3),
                  (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 60 else { return nil }
            let days = daysFromCivil(year, month, day)
            let total = ((days * 24 + hour) * 60 + minute) * 60 + second
            return .some(Date(timeIntervalSince1970: Double(total) + Double(millisecond) / 1000))
        }
        if let fast { return fast }
        return StoreValue.parseDate(text)
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
    private static func daysFromCivil(_ year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}
