import BatchRunKit
import Foundation

/// How far a queue item's run is, as the run publishes it once a second beside the item
/// (`running/ITEM.yaml.progress`, written atomically, removed at the run's end) for `batchrun
/// serve`, which then reads one small file per running item instead of the item's store.
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

    enum CodingKeys: String, CodingKey {
        case pid, host, jobs, rows, fraction
        case startedAt = "started_at"
    }

    /// Writes `run`'s progress to `path` once a second until cancelled, then removes the file.
    package static func publish(_ run: JobFileRun, to path: String) async {
        let startedAt = Date()
        let host = ProcessInfo.processInfo.hostName
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        while !Task.isCancelled {
            let live = run.liveProgress()
            let fractions = run.liveFractions()
            let progress = ItemProgress(pid: getpid(), host: host, jobs: live.map(\.job), rows: live.reduce(0) { $0 + $1.rows },
                                        fraction: fractions.isEmpty ? nil : fractions.values.reduce(0, +) / Double(fractions.count),
                                        startedAt: startedAt)
            if let data = try? encoder.encode(progress) { try? data.write(to: URL(fileURLWithPath: path), options: .atomic) }
            try? await Task.sleep(for: .seconds(1))
        }
        try? FileManager.default.removeItem(atPath: path)
    }

    /// The progress published at `path`, if any.
    package static func read(_ path: String) -> ItemProgress? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try? decoder.decode(ItemProgress.self, from: data)
    }
}
