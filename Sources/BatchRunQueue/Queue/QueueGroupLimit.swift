import BatchRunEngine
import Foundation

/// What `batchrun limit QUEUE GROUP` sets (JOBFILE.md 17): at most `running` items of the group
/// run at once across every worker, and at most `rate.count` of them start in any `rate.period`
/// seconds. Enforced where items are claimed; kept in the queue, so it holds for workers started
/// later and across their restarts.
///
/// ```swift
/// try queue.setLimit(QueueGroupLimit(group: "warehouse", running: 2, rate: .init(count: 10, period: 60)))
/// ```
package struct QueueGroupLimit: Sendable, Hashable, Codable {
    package struct Rate: Sendable, Hashable, Codable {
        package var count: Int
        /// Seconds.
        package var period: Double

        package init(count: Int, period: Double) {
            self.count = count
            self.period = period
        }

        package enum CodingKeys: String, CodingKey {
            case count
            case period = "period_s"
        }

        /// `N/PERIOD` as `--rate` takes it: `10/1m`, `1/30s`, `100/h` (a period without a number is one of it).
        package init?(_ text: String) {
            let fields = text.split(separator: "/", maxSplits: 1).map(String.init)
            guard fields.count == 2, let count = Int(fields[0]), count >= 1 else { return nil }
            let period = fields[1].first?.isNumber == true ? fields[1] : "1" + fields[1]
            guard let seconds = JobFileLoader.seconds(period), seconds > 0, seconds <= 7 * 86_400 else { return nil }
            self.init(count: count, period: seconds)
        }

        /// `10/60s`.
        package var text: String { "\(count)/\(QueueGroupLimit.format(period))" }
    }

    package var group: String
    package var running: Int?
    package var rate: Rate?

    package init(group: String, running: Int? = nil, rate: Rate? = nil) {
        self.group = group
        self.running = running
        self.rate = rate
    }

    /// No limit left: the group's record goes.
    package var isEmpty: Bool { running == nil && rate == nil }

    /// `at most 2 running, at most 10 starts per 60s`.
    package var text: String {
        let parts = (running.map { ["at most \($0) running"] } ?? []) + (rate.map { ["at most \($0.count) starts per \(QueueGroupLimit.format($0.period))"] } ?? [])
        return parts.isEmpty ? "no limit" : parts.joined(separator: ", ")
    }

    /// Seconds as the shortest of `45s`, `2m`, `3h`, `1d` that says them exactly.
    static func format(_ seconds: Double) -> String {
        for (unit, scale) in [("d", 86_400.0), ("h", 3600), ("m", 60)] where seconds >= scale && seconds.truncatingRemainder(dividingBy: scale) == 0 {
            return "\(Int(seconds / scale))\(unit)"
        }
        return seconds == seconds.rounded() ? "\(Int(seconds))s" : "\(seconds)s"
    }
}
