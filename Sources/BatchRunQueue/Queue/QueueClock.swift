import Foundation

/// The time queues compare due times with (`--at`, `--in`, retries, schedules): now, unless
/// the test-only variables move it. `BATCHRUN_TEST_CLOCK_OFFSET` (seconds) adds to it;
/// `BATCHRUN_TEST_CLOCK_SCALE` with `BATCHRUN_TEST_CLOCK_ANCHOR` (seconds since 1970) makes
/// it run that many times faster from the anchor, the same for every process given the same
/// anchor. They are for tests only (a worker that lives two minutes in six seconds); never set
/// them in production. A PostgreSQL queue moves the server's clock the same way.
///
/// ```swift
/// let due = QueueClock.now() >= runAt
/// ```
package enum QueueClock {
    package static let environment = ProcessInfo.processInfo.environment
    /// The test-only offset in seconds (0 unless set).
    package static let offset: Double = environment["BATCHRUN_TEST_CLOCK_OFFSET"].flatMap(Double.init) ?? 0
    /// The test-only speed of the clock, and the moment it runs faster from.
    package static let scale: Double = environment["BATCHRUN_TEST_CLOCK_SCALE"].flatMap(Double.init) ?? 1
    package static let anchor: Double = environment["BATCHRUN_TEST_CLOCK_ANCHOR"].flatMap(Double.init) ?? 0

    package static func now() -> Date {
        let real = Date().timeIntervalSince1970
        return Date(timeIntervalSince1970: anchor + (real - anchor) * scale + offset)
    }

    /// The same as SQL for PostgreSQL, from the server's clock.
    package static var postgresNow: String {
        guard scale != 1 else { return "(clock_timestamp() + \(offset) * interval '1 second')" }
        return "to_timestamp((\(anchor) + (extract(epoch FROM clock_timestamp()) - \(anchor)) * \(scale) + \(offset))::double precision)"
    }
}
