import Foundation

/// Everything a run did: written as `--report FILE.json` and rendered as text by the command.
///
/// ```swift
/// let data = try report.jsonData()
/// try data.write(to: URL(fileURLWithPath: "reports/nightly.json"))
/// ```
public struct RunReport: Sendable, Hashable, Codable {
    public enum Status: String, Sendable, Hashable, Codable {
        case ok, failed, cancelled
    }

    public var schema = 1
    /// The run's number in the store's run history (`batchrun runs`).
    public var runID: Int64?
    /// For a resumed run: the run it continued.
    public var resumedFrom: Int64?
    public var file: String
    public var store: String
    public var status: Status
    public var startedAt: Date
    public var elapsedSeconds: Double
    public var jobs: [JobReport]
    public var conflicts: [MergeConflictRecord]

    public init(file: String, store: String, status: Status = .ok, startedAt: Date = Date(),
                elapsedSeconds: Double = 0, jobs: [JobReport] = [], conflicts: [MergeConflictRecord] = []) {
        self.file = file
        self.store = store
        self.status = status
        self.startedAt = startedAt
        self.elapsedSeconds = elapsedSeconds
        self.jobs = jobs
        self.conflicts = conflicts
    }

    enum CodingKeys: String, CodingKey {
        case schema, file, store, status, jobs, conflicts
        case runID = "run_id"
        case resumedFrom = "resumed_from"
        case startedAt = "started_at"
        case elapsedSeconds = "elapsed_s"
    }

    /// The run's status from its jobs: cancelled if any was, failed if any failed or timed out.
    public static func status(of jobs: [JobReport], interrupted: Bool) -> Status {
        if interrupted { return .cancelled }
        if jobs.contains(where: { $0.status != .ok }) { return .failed }
        return .ok
    }

    /// Reads a report written by `jsonData()` (a `--report FILE.json`).
    ///
    /// ```swift
    /// let report = try RunReport(jsonData: Data(contentsOf: URL(fileURLWithPath: "var/nightly.json")))
    /// ```
    public init(jsonData: Data) throws {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        self = try decoder.decode(RunReport.self, from: jsonData)
    }

    /// Pretty-printed JSON with stable key order and ISO 8601 dates.
    public func jsonData() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        guard !conflicts.isEmpty else { return try encoder.encode(self) }
        // The conflicts (the bulk of a large report) are written directly into their place:
        // "conflicts" sorts first, so the encoded report without them begins with its empty array.
        var rest = self
        rest.conflicts = []
        let encoded = try encoder.encode(rest)
        let empty = Data("{\n  \"conflicts\" : [\n\n  ],\n".utf8)
        guard encoded.starts(with: empty) else { return try encoder.encode(self) }
        var data = Data("{\n  \"conflicts\" : [\n".utf8)
        data.append(contentsOf: ConflictsJSON(conflicts).bytes)
        data.append(contentsOf: "\n  ],\n".utf8)
        data.append(encoded[(encoded.startIndex + empty.count)...])
        return data
    }
}
