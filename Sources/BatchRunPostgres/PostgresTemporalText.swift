#if PostgreSQL
/// Text for PostgreSQL's binary `time`, `timetz` and `interval` values, as the server writes
/// them by default (`DateStyle` ISO, `IntervalStyle` postgres), so that a fetch's output reads as
/// the same value would in psql.
///
/// ```swift
/// PostgresTemporalText.time(microseconds: 36_300_250_000)                  // "10:05:00.25"
/// PostgresTemporalText.time(microseconds: 36_300_000_000, zoneWest: -7_200) // "10:05:00+02"
/// PostgresTemporalText.interval(microseconds: 14_706_000_000, days: 3, months: 14) // "1 year 2 mons 3 days 04:05:06"
/// ```
enum PostgresTemporalText {
    /// `HH:MM:SS`, with `.ffffff` (trailing zeros dropped) when there is a fraction; with a
    /// zone (`timetz`: seconds west of UTC), its offset after: `+02`, `-03:30`.
    static func time(microseconds: Int64, zoneWest: Int32? = nil) -> String {
        var text = clock(microseconds)
        if let zoneWest {
            let east = -Int(zoneWest), magnitude = abs(east)
            text += (east < 0 ? "-" : "+") + padded(magnitude / 3_600)
            if magnitude % 3_600 != 0 { text += ":" + padded(magnitude / 60 % 60) }
            if magnitude % 60 != 0 { text += ":" + padded(magnitude % 60) }
        }
        return text
    }

    /// An interval as PostgreSQL's `postgres` style writes it: `1 year 2 mons 3 days 04:05:06`,
    /// `-1 days +02:00:00`, `00:00:00` when it is zero.
    static func interval(microseconds: Int64, days: Int32, months: Int32) -> String {
        var parts: [String] = []
        var lastNegative = false
        for (value, unit) in [(Int(months / 12), "year"), (Int(months % 12), "mon"), (Int(days), "day")] where value != 0 {
            parts.append("\(lastNegative && value > 0 ? "+" : "")\(value) \(unit)\(value == 1 ? "" : "s")")
            lastNegative = value < 0
        }
        if parts.isEmpty || microseconds != 0 {
            let sign = microseconds < 0 ? "-" : lastNegative ? "+" : ""
            parts.append(sign + clock(microseconds.magnitude))
        }
        return parts.joined(separator: " ")
    }

    /// `HH:MM:SS[.ffffff]` of a non-negative duration; hours past 24 as they are.
    private static func clock<T: BinaryInteger>(_ microseconds: T) -> String {
        let whole = Int(microseconds / 1_000_000), fraction = Int(microseconds % 1_000_000)
        var text = "\(padded(whole / 3_600)):\(padded(whole / 60 % 60)):\(padded(whole % 60))"
        if fraction != 0 {
            var digits = String(fraction)
            digits = String(repeating: "0", count: 6 - digits.count) + digits
            while digits.hasSuffix("0") { digits.removeLast() }
            text += "." + digits
        }
        return text
    }

    private static func padded(_ value: Int) -> String {
        value < 10 ? "0\(value)" : String(value)
    }
}
#endif
