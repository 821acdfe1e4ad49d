import BatchRunStore
import Foundation

/// A cron line (`MIN HOUR DOM MON DOW`, or `@hourly`, `@daily`, `@weekly`, `@monthly`,
/// `@yearly`) in a time zone, as `batchrun schedule --cron ... --tz ...` takes it: `*`, numbers,
/// ranges `1-5`, steps `*/15` and `1-30/2`, lists `1,15`, and names of months (`jan`) and days
/// (`mon`; 0 and 7 are Sunday). When both day fields are restricted a day matches either, as in
/// cron. Daylight saving time is handled as cron does: a time skipped when clocks go forward is
/// due at the change (once, however many skipped times match); a time that happens twice when
/// clocks go back is due at its first occurrence only.
///
/// ```swift
/// let schedule = try CronSchedule("30 2 * * *", timeZone: "Europe/Berlin")
/// let last = schedule.latestDue(atOrBefore: Date())   // today's (or yesterday's) 02:30 in Berlin
/// ```
package struct CronSchedule: Sendable, Hashable {
    package let line: String
    package let timeZone: TimeZone
    package let minutes: Set<Int>, hours: Set<Int>, days: Set<Int>, months: Set<Int>, weekdays: Set<Int>
    let daysRestricted: Bool, weekdaysRestricted: Bool

    /// A cron line that is not one, with what is wrong.
    package struct Problem: BatchRunError {
        package let description: String

        package var code: String { "schedule.invalid-cron" }
        package var message: String { description }
        package var isInvalid: Bool { true }
    }

    package static let shortcuts = ["@hourly": "0 * * * *", "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@weekly": "0 0 * * 0",
                            "@monthly": "0 0 1 * *", "@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *"]
    static let monthNames = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    static let dayNames = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]

    package init(_ line: String, timeZone zone: String = "UTC") throws {
        guard let timeZone = TimeZone(identifier: zone) else {
            throw Problem(description: "unknown time zone '\(zone)' (a name like UTC, Europe/Berlin or America/New_York)")
        }
        self.line = line
        self.timeZone = timeZone
        let expanded = Self.shortcuts[line.lowercased().trimmingCharacters(in: .whitespaces)] ?? line
        let fields = expanded.split(whereSeparator: \.isWhitespace).map(String.init)
        guard fields.count == 5 else {
            throw Problem(description: "a cron line has five fields (MIN HOUR DOM MON DOW) or is @hourly, @daily, @weekly, @monthly or @yearly; found '\(line)'")
        }
        minutes = try Self.field(fields[0], "minute", 0...59)
        hours = try Self.field(fields[1], "hour", 0...23)
        days = try Self.field(fields[2], "day of month", 1...31)
        months = try Self.field(fields[3], "month", 1...12, names: Self.monthNames, firstName: 1)
        weekdays = Set(try Self.field(fields[4], "day of week", 0...7, names: Self.dayNames, firstName: 0).map { $0 % 7 })
        daysRestricted = !fields[2].hasPrefix("*")
        weekdaysRestricted = !fields[4].hasPrefix("*")
    }

    /// The values one field allows.
    package static func field(_ text: String, _ what: String, _ range: ClosedRange<Int>, names: [String] = [], firstName: Int = 0) throws -> Set<Int> {
        func value(_ part: Substring) throws -> Int {
            if let number = Int(part), range.contains(number) { return number }
            if let index = names.firstIndex(of: part.lowercased()) { return index + firstName }
            throw Problem(description: "\(what) '\(part)' in '\(text)' is not in \(range.lowerBound)-\(range.upperBound)\(names.isEmpty ? "" : " or a name like \(names[0])")")
        }
        var values = Set<Int>()
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            let parts = item.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
            var step = 1
            if parts.count == 2 {
                guard let given = Int(parts[1]), given > 0 else { throw Problem(description: "step '\(parts[1])' in '\(text)' is not a number above 0") }
                step = given
            }
            let bounds: ClosedRange<Int>
            if parts[0] == "*" {
                bounds = range
            } else if let dash = parts[0].firstIndex(of: "-") {
                let low = try value(parts[0][..<dash]), high = try value(parts[0][parts[0].index(after: dash)...])
                guard low <= high else { throw Problem(description: "range '\(parts[0])' in '\(text)' runs backwards") }
                bounds = low...high
            } else {
                let single = try value(parts[0])
                bounds = single...(parts.count == 2 ? range.upperBound : single)
            }
            values.formUnion(stride(from: bounds.lowerBound, through: bounds.upperBound, by: step))
        }
        return values
    }

    /// True when a local day matches the day fields (either, when both are restricted).
    package func matches(day: Int, month: Int, weekday: Int) -> Bool {
        guard months.contains(month) else { return false }
        let dayMatch = days.contains(day), weekdayMatch = weekdays.contains(weekday)
        if daysRestricted && weekdaysRestricted { return dayMatch || weekdayMatch }
        return dayMatch && weekdayMatch
    }

    /// The latest due time at or before `date`; nil when there is none in the 5 years before.
    package func latestDue(atOrBefore date: Date) -> Date? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        // From the local day of `date` (and the next, for a skipped time due at a change
        // before `date`), backwards.
        let start = calendar.startOfDay(for: date).addingTimeInterval(86_400 * 1.5)
        for back in 0..<(366 * 5) {
            guard let someTime = calendar.date(byAdding: .day, value: -back, to: start) else { return nil }
            let local = calendar.dateComponents([.year, .month, .day, .weekday], from: someTime)
            guard matches(day: local.day!, month: local.month!, weekday: local.weekday! - 1) else { continue }
            for hour in hours.sorted(by: >) {
                for minute in minutes.sorted(by: >) {
                    let due = instant(year: local.year!, month: local.month!, day: local.day!, hour: hour, minute: minute)
                    if due <= date { return due }
                }
            }
        }
        return nil
    }

    /// The next due time after `date`.
    package func nextDue(after date: Date) -> Date? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let start = calendar.startOfDay(for: date).addingTimeInterval(-86_400 / 2)
        for forward in 0..<(366 * 5) {
            guard let someTime = calendar.date(byAdding: .day, value: forward, to: start) else { return nil }
            let local = calendar.dateComponents([.year, .month, .day, .weekday], from: someTime)
            guard matches(day: local.day!, month: local.month!, weekday: local.weekday! - 1) else { continue }
            for hour in hours.sorted() {
                for minute in minutes.sorted() {
                    let due = instant(year: local.year!, month: local.month!, day: local.day!, hour: hour, minute: minute)
                    if due > date { return due }
                }
            }
        }
        return nil
    }

    /// The instant a local wall-clock time is due: its first occurrence; for a time the clocks
    /// skipped, the change itself.
    func instant(year: Int, month: Int, day: Int, hour: Int, minute: Int) -> Date {
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        let naive = utc.date(from: DateComponents(year: year, month: month, day: day, hour: hour, minute: minute))!
        let before = timeZone.secondsFromGMT(for: naive.addingTimeInterval(-43_200))
        let after = timeZone.secondsFromGMT(for: naive.addingTimeInterval(43_200))
        let valid = Set([before, after]).map { naive.addingTimeInterval(-Double($0)) }
            .filter { timeZone.secondsFromGMT(for: $0) == Int(naive.timeIntervalSince($0)) }
        if let first = valid.min() { return first }
        // Skipped (clocks went forward): due at the change, the first instant after the gap's start.
        let guess = naive.addingTimeInterval(-Double(before))
        if let change = timeZone.nextDaylightSavingTimeTransition(after: guess.addingTimeInterval(-7_200)), change <= guess { return change }
        return guess
    }
}
