import BatchRunKit
import Foundation

/// `batchrun queue QUEUE` as text: the counts per state, each state's items with what is known
/// of them (running ones with their process or worker, scheduled and retryable ones with their
/// time and attempts, failed ones with their error), then the schedules with their next due
/// time. One rendering for every kind of queue: what a queue does not know is not printed.
///
/// ```swift
/// print(QueueText.render(try openQueue(at: "var/queue").snapshot()))
/// ```
package enum QueueText {
    /// `queue --format json`: sorted keys, indented.
    package static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    package static func render(_ snapshot: QueueSnapshot) -> String {
        var first = "\(snapshot.queue): " + counts(snapshot.counts)
        if !snapshot.pause.groups.isEmpty { first += " (groups paused: \(snapshot.pause.groups.joined(separator: ", ")))" }
        if snapshot.pause.queue { first += " (paused)" }
        var lines = [first]
        for state in QueueItemState.allCases {
            let items = snapshot.items.filter { $0.state == state }
            guard !items.isEmpty else { continue }
            lines.append("\n\(state.rawValue)" + (snapshot.statesAreFolders ? "/" : ""))
            for item in items {
                var line = item.key == item.name ? "  \(item.name)" : "  \(item.key)  \(item.name)"
                if state == .running {
                    if item.orphaned == true { line += "  orphaned: its worker is gone; the next worker takes it over" }
                    if let process = item.process { line += "  process \(process)" }
                    if let jobs = item.jobs, !jobs.isEmpty { line += "  running \(jobs.joined(separator: ", "))" }
                    if let rows = item.rows { line += "  \(ReportPrinter.number(rows)) rows so far" }
                    if let worker = item.worker { line += "  worker \(worker)" }
                    if let left = item.leaseLeft {
                        line += left > 0 ? "  lease \(Int(left.rounded(.up)))s left" : "  lease ran out: the next worker takes it over"
                    }
                }
                if let claims = item.claims, item.maxAttempts == 1 && claims > 1 { line += "  claim \(claims)" }
                line += waiting(state: state, priority: item.priority, attempts: item.attempts, of: item.maxAttempts, runAt: item.runAt,
                                cancelling: item.cancelling, schedule: item.schedule)
                if let group = item.group { line += "  group \(group)" }
                if let batch = item.batch { line += "  batch \(batch)" + (item.part.map { " part \($0)" } ?? "") }
                if let error = item.error { line += "  error: \(error)" }
                lines.append(line)
            }
        }
        let batches = snapshot.batches.isEmpty ? [] : ["\nbatches"] + snapshot.batches.map { "  " + batch($0) }
        let limits = snapshot.limits.isEmpty ? [] : ["\nlimits"] + snapshot.limits.map { "  \($0.group)  \($0.text)" }
        return (lines + batches + limits + schedules(snapshot.schedules)).joined(separator: "\n")
    }

    /// A batch on one line: `3  load  24 parts: done 20 · running 3 · failed 1  1,234 rows  completion waiting`.
    package static func batch(_ batch: QueueBatch) -> String {
        let order = [QueueBatch.waiting] + QueueItemState.allCases.map(\.rawValue)
        let states = order.compactMap { state in batch.parts[state].map { "\(state) \($0)" } }.joined(separator: " · ")
        var line = "\(batch.id)  \(batch.job)  \(batch.partCount) part\(batch.partCount == 1 ? "" : "s"): \(states)  \(ReportPrinter.number(batch.rows)) rows"
        if let completion = batch.completion {
            line += "  completion " + (completion.id.map { "\($0) " } ?? "") + completion.state
        }
        return line
    }

    static func counts(_ counts: [String: Int]) -> String {
        QueueItemState.allCases.map { "\($0.rawValue) \(counts[$0.rawValue] ?? 0)" }.joined(separator: " · ")
    }

    /// What `submit`'s options, `cancel` and schedules add to an item's line.
    static func waiting(state: QueueItemState, priority: Int, attempts: Int, of maxAttempts: Int, runAt: String?, cancelling: Bool?,
                        schedule: String?) -> String {
        var line = priority != 0 ? "  priority \(priority)" : ""
        if let runAt { line += state == .retryable ? "  next try \(runAt)" : "  due \(runAt)" }
        if maxAttempts > 1 && attempts > 0 { line += "  attempt \(attempts) of \(maxAttempts)" }
        if cancelling == true { line += "  being cancelled" }
        if let schedule { line += "  from schedule \(schedule)" }
        return line
    }

    /// The schedules, each with its next due time.
    package static func schedules(_ schedules: [QueueScheduleListing]) -> [String] {
        guard !schedules.isEmpty else { return [] }
        return ["\nschedules"] + schedules.map { "  \($0.name)  \($0.cron)  \($0.timeZone)  next \($0.nextDue ?? "never")" }
    }
}
