import Foundation

/// How an item is queued, as `batchrun submit`'s options say: when it may run (`--at`, `--in`),
/// its priority, how many attempts a failing run gets and the backoff between them, and whether
/// an identical waiting or running item makes it a duplicate (`--unique`).
///
/// ```swift
/// var submission = QueueSubmission(priority: 5, delay: 3600)
/// submission.attempts = 3
/// let queued = try queue.submit(fileAt: "nightly.yaml", params: [:], sequence: 1, submission: submission)
/// ```
package struct QueueSubmission: Sendable, Hashable {
    /// Higher first; submission order (due time) within a priority.
    package var priority: Int
    /// Not claimed before this time (`--at`).
    package var runAt: Date?
    /// Not claimed before this many seconds from now (`--in`).
    package var delay: Double?
    /// How many runs a failing item gets (1: no retry).
    package var attempts: Int
    /// Seconds before the second attempt; doubled for each further one (with jitter).
    package var backoff: Double
    /// Not queued when the same text with the same params is already waiting or running.
    package var unique: Bool
    /// The group the item is in (`--group`), which `batchrun limit` may limit; nil: none.
    package var group: String?

    /// True for a group's name: 1 to 64 letters, digits, `_`, `-` and `.`, starting with a letter or digit.
    package static func isGroupName(_ name: String) -> Bool {
        func isAlphanumeric(_ byte: UInt8) -> Bool { (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte) }
        return (1...64).contains(name.utf8.count) && name.utf8.first.map(isAlphanumeric) == true
            && name.utf8.allSatisfy { isAlphanumeric($0) || $0 == 95 || $0 == 45 || $0 == 46 }
    }

    /// What `isGroupName` wants, for a message.
    package static let groupNameRule = "1 to 64 letters, digits, _, - and ., starting with a letter or digit"

    /// The priorities an item may have.
    package static let priorities = -99_999...99_999
    /// The attempts an item may have.
    package static let attemptRange = 1...1_000
    /// The longest `--backoff`: a week.
    package static let longestBackoff = 7 * 86_400.0
    /// The latest time an item may be due (`--in`, `--at`): the end of year 9999, the last a
    /// date in the queue's ISO 8601 form can name.
    package static let latestDueTime = Date(timeIntervalSince1970: 253_402_300_799)   // 9999-12-31T23:59:59Z

    package init(priority: Int = 0, runAt: Date? = nil, delay: Double? = nil, attempts: Int = 1, backoff: Double = 30, unique: Bool = false) {
        self.priority = priority
        self.runAt = runAt
        self.delay = delay
        self.attempts = attempts
        self.backoff = backoff
        self.unique = unique
    }

    /// When the item becomes due, on `now`'s clock.
    package func dueTime(now: Date) -> Date {
        if let runAt { return runAt }
        return now.addingTimeInterval(delay ?? 0)
    }

    /// The wait before attempt `attempt + 1` after attempt `attempt` failed: backoff x
    /// 2^(attempt-1), with up to 10% jitter either way (so items that failed together do not
    /// all come back at once).
    package func retryDelay(after attempt: Int) -> Double {
        let base = backoff * pow(2, Double(max(attempt, 1) - 1))
        return max(0, base * Double.random(in: 0.9...1.1))
    }

    /// A time as `--at` takes it: `2026-12-01T03:00Z`, `2026-12-01T03:00:30+01:00`,
    /// `2026-12-01 03:00` (UTC when no zone is given), `2026-12-01` (midnight UTC); nil when it
    /// is none of these.
    package static func time(_ text: String) -> Date? {
        let pattern = #"^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?(Z|[+-]\d{2}:?\d{2})?$"#
        guard let regex = try? NSRegularExpression(pattern: pattern),
              let match = regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) else { return nil }
        func group(_ index: Int) -> String? {
            Range(match.range(at: index), in: text).map { String(text[$0]) }
        }
        var components = DateComponents()
        components.year = Int(group(1)!)
        components.month = Int(group(2)!)
        components.day = Int(group(3)!)
        components.hour = group(4).flatMap(Int.init) ?? 0
        components.minute = group(5).flatMap(Int.init) ?? 0
        components.second = group(6).flatMap(Int.init) ?? 0
        var offset = 0
        if let zone = group(8), zone != "Z" {
            let digits = zone.dropFirst().filter(\.isNumber)
            let minutes = Int(digits.prefix(2))! * 60 + Int(digits.suffix(2))!
            offset = (zone.hasPrefix("-") ? -1 : 1) * minutes * 60
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: offset)!
        guard let month = components.month, (1...12).contains(month), let day = components.day, (1...31).contains(day),
              (0...23).contains(components.hour!), (0...59).contains(components.minute!), (0...60).contains(components.second!),
              let date = calendar.date(from: components),
              calendar.component(.day, from: date) == day else { return nil }
        let fraction = group(7).map { Double("0." + $0) ?? 0 } ?? 0
        return date.addingTimeInterval(fraction)
    }
}

/// What `Queue.submit` did: the item as the queue names it, and whether it was already there
/// (a `--unique` submission that found the same item waiting or running, and queued nothing).
package struct QueueSubmitted: Sendable, Hashable {
    package var name: String
    package var existing: Bool

    package init(name: String, existing: Bool = false) {
        self.name = name
        self.existing = existing
    }
}
