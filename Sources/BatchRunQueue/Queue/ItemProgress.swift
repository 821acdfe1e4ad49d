import BatchRunEngine
import BatchRunStore
import Foundation

/// How far a queue item's run is, as the run publishes it once a second beside a folder item
/// (`running/ITEM.yaml.progress`, written atomically, removed at the run's end) or into a
/// PostgreSQL item's row, for a live snapshot (`batchrun serve`), which then reads one small
/// file or column per running item instead of the item's store.
///
/// ```json
/// {"pid":4121,"host":"etl-1","jobs":["load"],"rows":103200,"fraction":0.238,"started_at":"2026-11-26T14:03:07Z"}
/// ```
package struct ItemProgress: Codable, Sendable {
    package var pid: Int32
    package var host: String
    /// The running jobs.
    package var jobs: [String]
    /// Rows committed (or fetched) so far by the running jobs.
    package var rows: Int
    /// Bytes of the running jobs' feeds read of their size (0...1); nil when none reads a feed.
    package var fraction: Double?
    package var startedAt: Date

    package init(pid: Int32, host: String, jobs: [String], rows: Int, fraction: Double?, startedAt: Date) {
        (self.pid, self.host, self.jobs, self.rows, self.fraction, self.startedAt) = (pid, host, jobs, rows, fraction, startedAt)
    }

    enum CodingKeys: String, CodingKey {
        case pid, host, jobs, rows, fraction
        case startedAt = "started_at"
    }

    /// `run`'s progress now (`startedAt`: when its publishing began).
    static func current(_ run: JobFileRun, startedAt: Date, host: String) -> ItemProgress {
        let live = run.liveProgress()
        let fractions = run.liveFractions()
        return ItemProgress(pid: getpid(), host: host, jobs: live.map(\.job), rows: live.reduce(0) { $0 + $1.rows },
                            fraction: fractions.isEmpty ? nil : fractions.values.reduce(0, +) / Double(fractions.count),
                            startedAt: startedAt)
    }

    package static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }

    /// The task that publishes a queue item's run: to `file` beside a folder item, or into a
    /// PostgreSQL item's row under its `fence`; nil for a run that is no queue item's.
    package static func publisher(_ run: JobFileRun, file: String?, fence: QueueFence?) -> Task<Void, Never>? {
        if let file { return Task { await publish(run, to: file) } }
        #if PostgreSQL
        if let fence { return Task { await publish(run, to: fence) } }
        #endif
        return nil
    }

    /// Writes `run`'s progress to `path` once a second until cancelled, then removes the file.
    package static func publish(_ run: JobFileRun, to path: String) async {
        let startedAt = Date()
        let host = ProcessInfo.processInfo.hostName
        let encoder = Self.encoder
        while !Task.isCancelled {
            if let data = try? encoder.encode(current(run, startedAt: startedAt, host: host)) {
                try? data.write(to: URL(fileURLWithPath: path), options: .atomic)
            }
            try? await Task.sleep(for: .seconds(1))
        }
        try? FileManager.default.removeItem(atPath: path)
    }

    #if PostgreSQL
    /// Writes `run`'s progress into its PostgreSQL item's row (the `progress` column) once a
    /// second until cancelled, from its first second on (a shorter item costs no connection),
    /// fenced as its writes are: never once another worker took the item over or its lease ran
    /// out. Best effort: a failed write is tried again the next second; the worker clears the
    /// column when it ends the claim, and the next claim starts without it.
    package static func publish(_ run: JobFileRun, to fence: QueueFence) async {
        let startedAt = Date()
        let host = ProcessInfo.processInfo.hostName
        let encoder = Self.encoder
        var queue: PostgresQueue?
        while !Task.isCancelled {
            do { try await Task.sleep(for: .seconds(1)) } catch { return }
            guard let data = try? encoder.encode(current(run, startedAt: startedAt, host: host)) else { continue }
            do {
                if queue == nil { queue = try PostgresQueue(url: fence.queue, idleTimeout: min(fence.lease, PostgresQueue.idleTimeout)) }
                if try queue?.publishProgress(String(decoding: data, as: UTF8.self), item: fence.item, token: fence.token) == false { return }
            } catch {
                continue
            }
        }
    }
    #endif

    /// The progress published at `path`, if any.
    package static func read(_ path: String) -> ItemProgress? {
        FileManager.default.contents(atPath: path).flatMap(decode)
    }

    /// Progress as published (JSON). Its time is read by `date(_:)`, not by Foundation's
    /// ISO 8601 strategy, which loads ICU's calendar and time zones (1.8 MB more resident in `serve`).
    package static func decode(_ data: Data) -> ItemProgress? {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = date(text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an ISO 8601 time: \(text)")
            }
            return date
        }
        return try? decoder.decode(ItemProgress.self, from: data)
    }

    /// `2026-11-26T14:03:07Z`, with optional fractional seconds and a `Z` or `±HH:MM` offset,
    /// as a `Date`; nil for anything else (a time without its zone, a space for the `T`). Read
    /// by `DateText.writtenDate`, without Foundation's ISO 8601 parser.
    package static func date(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes[10] == UInt8(ascii: "T"),
              bytes.last == UInt8(ascii: "Z") || bytes[bytes.count - 3] == UInt8(ascii: ":") else { return nil }
        return DateText.writtenDate(text)
    }
}
