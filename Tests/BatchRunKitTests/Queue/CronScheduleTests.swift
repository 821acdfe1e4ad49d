import Foundation
import Testing
@testable import BatchRunKit

/// The cron evaluator: fields, shortcuts, day matching as cron does, and time zones across
/// daylight saving changes (computed, not waited for).
@Suite("Cron schedules")
struct CronScheduleTests {
    static func utc(_ text: String) -> Date { QueueSubmission.time(text)! }
    static func iso(_ date: Date?) -> String { date.map { $0.formatted(Date.ISO8601FormatStyle()) } ?? "nil" }

    @Test("fields: lists, ranges, steps, names, shortcuts; day of month and day of week either when both are restricted")
    func fields() throws {
        let every15 = try CronSchedule("*/15 9-17 * * mon-fri")
        #expect(Self.iso(every15.nextDue(after: Self.utc("2026-11-27T17:50Z"))) == "2026-11-30T09:00:00Z")   // Friday evening: Monday
        #expect(Self.iso(every15.latestDue(atOrBefore: Self.utc("2026-11-26T12:14Z"))) == "2026-11-26T12:00:00Z")
        #expect(Self.iso(try CronSchedule("@daily").latestDue(atOrBefore: Self.utc("2026-11-26T00:00Z"))) == "2026-11-26T00:00:00Z")
        #expect(Self.iso(try CronSchedule("@hourly").nextDue(after: Self.utc("2026-11-26T10:00Z"))) == "2026-11-26T11:00:00Z")
        #expect(Self.iso(try CronSchedule("@weekly").nextDue(after: Self.utc("2026-11-26T10:00Z"))) == "2026-11-29T00:00:00Z")   // Sunday
        // The 13th or any Friday.
        let either = try CronSchedule("0 0 13 * 5")
        #expect(Self.iso(either.nextDue(after: Self.utc("2026-11-01T00:00Z"))) == "2026-11-06T00:00:00Z")
        #expect(Self.iso(either.nextDue(after: Self.utc("2026-11-10T00:00Z"))) == "2026-11-13T00:00:00Z")
        #expect(Self.iso(try CronSchedule("0 12 1,15 jan,jul 7").nextDue(after: Self.utc("2026-11-26T00:00Z"))) == "2027-01-01T12:00:00Z")
        #expect(Self.iso(try CronSchedule("* * * * *").latestDue(atOrBefore: Self.utc("2026-11-26T10:03:59Z"))) == "2026-11-26T10:03:00Z")
        for bad in ["* * * *", "60 * * * *", "* 24 * * *", "* * 0 * *", "* * * 13 *", "*/0 * * * *", "5-1 * * * *", "@often", "* * * foo *"] {
            #expect(throws: CronSchedule.Problem.self, "\(bad)") { try CronSchedule(bad) }
        }
        #expect(throws: CronSchedule.Problem.self) { try CronSchedule("@daily", timeZone: "Mars/Olympus") }
    }

    @Test("a time zone with its daylight saving changes: a skipped time is due at the change, once; a repeated time once, at its first occurrence")
    func daylightSaving() throws {
        // Berlin: 2026-03-29 02:00 CET becomes 03:00 CEST (01:00Z); 2026-10-25 03:00 CEST becomes 02:00 CET (01:00Z).
        let daily = try CronSchedule("30 2 * * *", timeZone: "Europe/Berlin")
        #expect(Self.iso(daily.nextDue(after: Self.utc("2026-03-28T12:00Z"))) == "2026-03-29T01:00:00Z")   // skipped: at the change
        #expect(Self.iso(daily.nextDue(after: Self.utc("2026-03-29T01:00Z"))) == "2026-03-30T00:30:00Z")   // then 02:30 CEST
        #expect(Self.iso(daily.nextDue(after: Self.utc("2026-03-27T12:00Z"))) == "2026-03-28T01:30:00Z")   // 02:30 CET
        #expect(Self.iso(daily.nextDue(after: Self.utc("2026-10-24T12:00Z"))) == "2026-10-25T00:30:00Z")   // first 02:30 (CEST)
        #expect(Self.iso(daily.nextDue(after: Self.utc("2026-10-25T00:30Z"))) == "2026-10-26T01:30:00Z")   // not the second one
        #expect(Self.iso(daily.latestDue(atOrBefore: Self.utc("2026-10-25T01:45Z"))) == "2026-10-25T00:30:00Z")
        // Every 15 minutes through the skipped hour: 02:00 to 02:45 all due at the change, which is queued once.
        let quarter = try CronSchedule("*/15 2 * * *", timeZone: "Europe/Berlin")
        #expect(Self.iso(quarter.nextDue(after: Self.utc("2026-03-28T23:00Z"))) == "2026-03-29T01:00:00Z")
        #expect(Self.iso(quarter.nextDue(after: Self.utc("2026-03-29T01:00Z"))) == "2026-03-30T00:00:00Z")
        // New York: 2026-03-08 02:00 EST becomes 03:00 EDT (07:00Z).
        let newYork = try CronSchedule("0 9 * * *", timeZone: "America/New_York")
        #expect(Self.iso(newYork.nextDue(after: Self.utc("2026-03-07T15:00Z"))) == "2026-03-08T13:00:00Z")   // 09:00 EDT
        #expect(Self.iso(newYork.latestDue(atOrBefore: Self.utc("2026-03-08T13:59Z"))) == "2026-03-08T13:00:00Z")
        #expect(Self.iso(newYork.latestDue(atOrBefore: Self.utc("2026-03-08T12:59Z"))) == "2026-03-07T14:00:00Z")   // 09:00 EST
    }

    @Test("a schedule queues only due times from when it was made")
    func dueNow() throws {
        let entry = try QueueScheduleEntry(name: "nightly", cron: "@daily", timeZone: "UTC", text: "", params: [:], directory: "/",
                                           created: Self.utc("2026-11-26T10:00Z"))
        #expect(entry.dueNow(Self.utc("2026-11-26T23:59Z")) == nil)   // today's midnight came before it
        #expect(Self.iso(entry.dueNow(Self.utc("2026-11-28T05:00Z"))) == "2026-11-28T00:00:00Z")   // only the latest missed one
        #expect(throws: CronSchedule.Problem.self) {
            try QueueScheduleEntry(name: "../x", cron: "@daily", timeZone: "UTC", text: "", params: [:], directory: "/")
        }
    }

    @Test("--at times: zones, seconds, dates; nonsense is nil")
    func atTimes() {
        #expect(Self.iso(QueueSubmission.time("2026-12-01T03:00Z")) == "2026-12-01T03:00:00Z")
        #expect(Self.iso(QueueSubmission.time("2026-12-01T04:00:30+01:00")) == "2026-12-01T03:00:30Z")
        #expect(Self.iso(QueueSubmission.time("2026-12-01 03:00")) == "2026-12-01T03:00:00Z")
        #expect(Self.iso(QueueSubmission.time("2026-12-01")) == "2026-12-01T00:00:00Z")
        for bad in ["tomorrow", "2026-02-30", "2026-13-01", "2026-12-01T25:00Z", ""] { #expect(QueueSubmission.time(bad) == nil, "\(bad)") }
    }

    @Test("folder item names sort in run order: priority first (higher first), then due time")
    func folderNames() {
        let now = Self.utc("2026-11-26T10:00Z")
        let names = [(0, 0.0), (5, 10.0), (-1, 0.0), (5, 0.0), (99_999, 0.0), (-99_999, 0.0), (0, 5.0)].map { priority, offset in
            QueueFolderName(priority: priority, due: now.addingTimeInterval(offset), number: 1, base: "job").text
        }
        #expect(names.sorted().map(QueueFolderName.priority(of:)) == [99_999, 5, 5, 0, 0, -1, -99_999])
        #expect(QueueFolderName.due(of: names[1]) == now.addingTimeInterval(10))
        #expect(QueueFolderName.dueStamp(of: "by-hand.yaml") == nil && QueueFolderName.priority(of: "by-hand.yaml") == 0)
    }
}
