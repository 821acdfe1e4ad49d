import Foundation

/// A schedule of a queue (`batchrun schedule QUEUE FILE --cron ...`): a job file with its params
/// that workers queue at each due time of its cron line, once per due time however many workers
/// run; a due time missed while no worker ran is queued once (only the latest) when one starts.
///
/// ```swift
/// let entry = try QueueScheduleEntry(name: "nightly", cron: "0 3 * * *", timeZone: "Europe/Berlin", text: text, params: [:], directory: "/srv")
/// try queue.addSchedule(entry)
/// ```
package struct QueueScheduleEntry: Sendable, Hashable {
    package var name: String
    package var cron: CronSchedule
    package var text: String
    package var params: [String: String]
    /// The folder its relative paths resolve against (a PostgreSQL queue's items).
    package var directory: String
    /// When it was made: due times before it are not queued.
    package var created: Date

    package init(name: String, cron: String, timeZone: String, text: String, params: [String: String], directory: String,
                 created: Date = QueueClock.now()) throws {
        guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "." }), !name.hasPrefix(".") else {
            throw CronSchedule.Problem(description: "a schedule's name is letters, digits, '-', '_' and '.' (not first), found '\(name)'")
        }
        self.name = name
        self.cron = try CronSchedule(cron, timeZone: timeZone)
        self.text = text
        self.params = params
        self.directory = directory
        self.created = created
    }

    /// The due time to queue now: the latest at or before `now`, unless it came before the
    /// schedule was made.
    package func dueNow(_ now: Date) -> Date? {
        guard let due = cron.latestDue(atOrBefore: now), due >= created.addingTimeInterval(-0.001) else { return nil }
        return due
    }
}

/// A schedule as `schedule --list` and `queue` show it.
package struct QueueScheduleListing: Sendable, Codable, Hashable {
    package var name: String
    package var cron: String
    package var timeZone: String
    package var nextDue: String?

    package enum CodingKeys: String, CodingKey {
        case name, cron
        case timeZone = "tz", nextDue = "next_due"
    }

    package init(_ entry: QueueScheduleEntry, now: Date = QueueClock.now()) {
        name = entry.name
        cron = entry.cron.line
        timeZone = entry.cron.timeZone.identifier
        nextDue = entry.cron.nextDue(after: now).map { $0.formatted(Date.ISO8601FormatStyle()) }
    }
}
