import Foundation
import Testing
@testable import BatchRunKit
@_spi(BatchRunPackage) import BatchRunStore

/// Dates as the store keeps them (`DateText`, written without Foundation's format styles): the
/// text of each date, to its nearest millisecond, and back.
@Suite("Date text")
struct DateTextTests {
    /// Milliseconds since 1970 over the years `standardText` writes (0001-9999), every part of
    /// the text varied, and the edges of days, months, leap years and the range.
    static func milliseconds() -> [Int64] {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        var all: [Int64] = []
        for _ in 0..<5_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            // From 0001-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z.
            all.append(-62_135_596_800_000 + Int64(state >> 11) % 315_537_897_600_000)
        }
        return all + [0, -1, 999, 86_399_999, 951_782_400_000, 951_868_799_999, 1_709_164_800_000, 4_107_542_399_999,
                      -62_135_596_800_000, 253_402_300_799_999, 1_769_847_300_500, -2_208_988_800_001]
    }

    /// The text of `milliseconds` by another road: Foundation's text of the whole second (a
    /// double holds whole seconds exactly), with the milliseconds put in. Foundation's calendar
    /// is Julian before 1582-10-15 where ISO 8601 (and SQLite, and PostgreSQL) keep the
    /// Gregorian one: earlier dates are checked against `gregorianBefore1583` instead.
    static func expected(_ milliseconds: Int64) -> String? {
        guard milliseconds >= -12_212_553_600_000 else { return nil }   // 1583-01-01T00:00:00Z
        let seconds = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
        let whole = Date(timeIntervalSince1970: Double(seconds)).formatted(Date.ISO8601FormatStyle())   // ...:SSZ
        let fraction = String(milliseconds - seconds * 1000)
        return whole.dropLast() + "." + String(repeating: "0", count: 3 - fraction.count) + fraction + "Z"
    }

    @Test("each of 5,012 dates over years 1-9999 made from its milliseconds gives their text, and the text reads back to the same date")
    func textOfMilliseconds() {
        for milliseconds in Self.milliseconds() {
            let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
            let text = DateText.standardText(date)
            if let expected = Self.expected(milliseconds) {
                #expect(text == expected, "\(milliseconds)")
            }
            #expect(StoreValue(date) == text.map(StoreValue.text), "\(milliseconds)")
            #expect(text.flatMap(DateText.date) == date, "\(milliseconds)")   // the same double
        }
    }

    /// Dates before 1583 in the proleptic Gregorian calendar (Python's `calendar.timegm`).
    static let gregorianBefore1583: [(seconds: Double, text: String)] = [
        (-62_135_596_800, "0001-01-01T00:00:00.000Z"), (-62_035_804_801, "0004-02-29T23:59:59.000Z"),
        (-55_824_335_999, "0200-12-31T00:00:01.000Z"), (-30_605_081_104, "1000-03-01T12:34:56.000Z"),
        (-12_220_214_400, "1582-10-04T08:00:00.000Z"), (-12_219_264_000, "1582-10-15T08:00:00.000Z"),
    ]

    @Test("dates before 1583 are in the proleptic Gregorian calendar, as ISO 8601, SQLite and PostgreSQL count them")
    func gregorianBefore1583() {
        for (seconds, text) in Self.gregorianBefore1583 {
            #expect(DateText.text(Date(timeIntervalSince1970: seconds)) == text)
            #expect(DateText.date(text) == Date(timeIntervalSince1970: seconds))
        }
    }

    @Test("the ISO 8601 forms date(_:) reads itself give Foundation's date for them, for 500 dates from 1583 on")
    func readsFormsAsFoundation() {
        var compared = 0
        for milliseconds in Self.milliseconds().prefix(500) where milliseconds >= -12_212_553_600_000 {
            let text = DateText.text(Date(timeIntervalSince1970: Double(milliseconds) / 1000))
            let time = String(text.prefix(19))   // YYYY-MM-DDTHH:MM:SS
            let forms = [String(text.prefix(10)), time, time.replacingOccurrences(of: "T", with: " "), time + "Z", time + ".5Z",
                         time + ".123456", time + ".25Z", time + "+05:30", time + ".75-08:00", text]
            for form in forms {
                guard let foundation = StoreValue.parseDate(form) else { continue }
                let ours = DateText.date(form)
                // Within a millisecond: Foundation keeps less of a long fraction, and a double
                // of year 4000 resolves 15 microseconds; any field read wrong is a second or more.
                #expect(ours.map { abs($0.timeIntervalSince(foundation)) < 1e-3 } == true, "\(form)")
                compared += 1
            }
        }
        #expect(compared > 2_000)
    }

    @Test("those forms before 1583 are read in the proleptic Gregorian calendar too")
    func readsFormsGregorian() {
        #expect(DateText.date("1000-03-01") == Date(timeIntervalSince1970: -30_605_126_400))
        #expect(DateText.date("1000-03-01 12:34:56") == Date(timeIntervalSince1970: -30_605_081_104))
        #expect(DateText.date("1582-10-04T09:00:00+01:00") == Date(timeIntervalSince1970: -12_220_214_400))
        #expect(DateText.date("0001-01-01T00:00:00Z") == Date(timeIntervalSince1970: -62_135_596_800))
    }

    @Test("a date between two milliseconds is written as the nearer one, carrying into the next second")
    func nearestMillisecond() {
        #expect(DateText.text(Date(timeIntervalSince1970: 1_769_847_300.1234)) == "2026-01-31T08:15:00.123Z")
        #expect(DateText.text(Date(timeIntervalSince1970: 1_769_847_300.1236)) == "2026-01-31T08:15:00.124Z")
        #expect(DateText.text(Date(timeIntervalSince1970: 1_769_847_359.9996)) == "2026-01-31T08:16:00.000Z")
        #expect(DateText.text(Date(timeIntervalSince1970: -0.0004)) == "1970-01-01T00:00:00.000Z")
    }

    @Test("the run ledger's times as earlier versions wrote them (Foundation's text, its milliseconds truncated, or none) read back and print as recorded")
    func ledgerTextWrittenEarlier() throws {
        let foundation = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        for step in 0..<20_000 {
            let date = Date(timeIntervalSince1970: 1_700_000_000 + Double(step) * 0.001 + Double(step % 97) * 3_600.123)
            let old = date.formatted(foundation)
            #expect(DateText.text(try #require(DateText.date(old))) == old)
            let new = DateText.text(date)
            #expect(DateText.text(try #require(DateText.date(new))) == new)
        }
        #expect(DateText.date("2026-11-26T03:00:00Z") == Date(timeIntervalSince1970: 1_795_662_000))
        #expect(DateText.date("2026-11-26T03:00:01.611Z") == Date(timeIntervalSince1970: 1_795_662_001.611))
        #expect(DateText.text(Date(timeIntervalSince1970: 1_795_662_001.611)) == "2026-11-26T03:00:01.611Z")
        // Foundation wrote .000 and .727 for these; DateText the nearest millisecond.
        #expect(DateText.text(Date(timeIntervalSince1970: 0.0006)) == "1970-01-01T00:00:00.001Z")
        #expect(DateText.text(Date(timeIntervalSince1970: 1_769_847_300.728)) == "2026-01-31T08:15:00.728Z")
        #expect(DateText.date("not a time") == nil && DateText.date("2026-13-01T00:00:00Z") == nil)
    }

    @Test("day(daysSince1970:) is the date part of the standard text for each of the 5,012 dates; nil outside years 1-9999")
    func dayOfEachDate() {
        for milliseconds in Self.milliseconds() {
            let days = milliseconds >= 0 ? milliseconds / 86_400_000 : (milliseconds - 86_399_999) / 86_400_000
            let text = DateText.standardText(Date(timeIntervalSince1970: Double(milliseconds) / 1_000)) ?? ""
            #expect(DateText.day(daysSince1970: days) == String(text.prefix(10)), "\(milliseconds) ms, day \(days)")
        }
        #expect(DateText.day(daysSince1970: -1) == "1969-12-31")
        #expect(DateText.day(daysSince1970: 10_957 + 59) == "2000-02-29")
        #expect(DateText.day(daysSince1970: -719_162) == "0001-01-01")
        #expect(DateText.day(daysSince1970: -719_163) == nil)
        #expect(DateText.day(daysSince1970: 2_932_897) == nil)   // 10000-01-01
    }

    @Test("dates outside years 1-9999 have no standard text; text(_:) gives Foundation's ISO 8601 text for them")
    func outsideRange() {
        for seconds in [-62_135_596_800.001, 253_402_300_800.0, 1e13] {
            let date = Date(timeIntervalSince1970: seconds)
            #expect(DateText.standardText(date) == nil)
            #expect(DateText.text(date) == date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
        }
    }

    @Test("ISO8601Text.unixMicroseconds: each of the 5,012 dates' text, and the same instants written with a zone's offset, give their microseconds; forms the database reads its own way give nil")
    func unixMicroseconds() throws {
        for milliseconds in Self.milliseconds() {
            let text = try #require(DateText.standardText(Date(timeIntervalSince1970: Double(milliseconds) / 1000)))
            #expect(ISO8601Text.unixMicroseconds(text, zonelessIsUTC: false) == milliseconds * 1000, "\(text)")
            // The same instant as local time at +05:30, -08:00, +01 and -0945 (within years 1-9999).
            for (offset, zone) in [(19_800, "+05:30"), (-28_800, "-08:00"), (3_600, "+01"), (-35_100, "-0945")] {
                guard let local = DateText.standardText(Date(timeIntervalSince1970: Double(milliseconds) / 1000 + Double(offset))) else { continue }
                #expect(ISO8601Text.unixMicroseconds(String(local.dropLast()) + zone, zonelessIsUTC: false) == milliseconds * 1000, "\(local) \(zone)")
            }
        }
        #expect(ISO8601Text.unixMicroseconds("2026-01-31 08:15", zonelessIsUTC: true) == 1_769_847_300_000_000)
        #expect(ISO8601Text.unixMicroseconds("2026-01-31", zonelessIsUTC: true) == 1_769_817_600_000_000)
        #expect(ISO8601Text.unixMicroseconds("2026-01-31T08:15:00.000001Z", zonelessIsUTC: false) == 1_769_847_300_000_001)
        for other in ["2026-01-31 08:15", "2026-01-31"] {   // a session's time zone reads them
            #expect(ISO8601Text.unixMicroseconds(other, zonelessIsUTC: false) == nil, "\(other)")
        }
        for refused in ["2026-02-29T00:00:00Z", "2026-04-31T00:00:00Z", "0000-01-01T00:00:00Z", "2026-12-31T23:59:60Z",
                        "2026-01-01T00:00:00.1234567Z", "2026-01-01T00:00:00+16:00", "2026-01-01T00:00:00+01:60", "31/01/2026"] {
            #expect(ISO8601Text.unixMicroseconds(refused, zonelessIsUTC: true) == nil, "\(refused)")
        }
    }
}
