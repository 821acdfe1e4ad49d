import BatchRunStore
import Foundation

/// Everything a run did: written as `--report FILE.json` and rendered as text by the command.
///
/// ```swift
/// try report.writeJSON(to: "reports/nightly.json")
/// let again = try RunReport(jsonData: Data(contentsOf: URL(fileURLWithPath: "reports/nightly.json")))
/// ```
public struct RunReport: Sendable, Hashable, Codable {
    public enum Status: String, Sendable, Hashable, Codable {
        case ok, failed, cancelled
    }

    package var schema = 1
    /// The run's number in the store's run history (`batchrun runs`).
    package var runID: Int64?
    /// For a resumed run: the run it continued.
    package var resumedFrom: Int64?
    /// The schema changes made before the jobs started (JOBFILE.md section 13); nil in a
    /// report written before batchrun made them.
    package var schemaChanges: [SchemaChangeRecord]?
    /// The job file as the command line named it; a PostgreSQL queue item's run names the item
    /// (`postgresql://HOST:PORT/DB#ID`), whose text is in no file.
    public var file: String
    /// A fan-out part's run (JOBFILE.md 17): the part it read, a path or `s3://BUCKET/KEY`.
    package var part: String?
    package var store: String
    public var status: Status
    package var startedAt: Date
    package var elapsedSeconds: Double
    public var jobs: [JobReport]
    public var conflicts: ConflictRecords

    package init(file: String, store: String, status: Status = .ok, startedAt: Date = Date(),
                elapsedSeconds: Double = 0, jobs: [JobReport] = [], conflicts: ConflictRecords = []) {
        self.file = file
        self.store = store
        self.status = status
        self.startedAt = startedAt
        self.elapsedSeconds = elapsedSeconds
        self.jobs = jobs
        self.conflicts = conflicts
    }

    /// The same, with the conflicts as an array.
    package init(file: String, store: String, status: Status = .ok, startedAt: Date = Date(),
                elapsedSeconds: Double = 0, jobs: [JobReport] = [], conflicts: [MergeConflictRecord]) {
        self.init(file: file, store: store, status: status, startedAt: startedAt, elapsedSeconds: elapsedSeconds, jobs: jobs,
                  conflicts: ConflictRecords(conflicts))
    }

    package enum CodingKeys: String, CodingKey {
        case schema, file, part, store, status, jobs, conflicts
        case runID = "run_id"
        case resumedFrom = "resumed_from"
        case schemaChanges = "schema_changes"
        case startedAt = "started_at"
        case elapsedSeconds = "elapsed_s"
    }

    /// Rows the run's jobs wrote (inserted, updated, deleted), over every attempt of a resumed run.
    package var rowsWritten: Int {
        jobs.reduce(0) { $0 + $1.rowsTotal.inserted + $1.rowsTotal.updated + $1.rowsTotal.deleted }
    }

    /// The run's status from its jobs: cancelled if any was, failed if any failed or timed out.
    package static func status(of jobs: [JobReport], interrupted: Bool) -> Status {
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
        var data = Data()
        try encodeJSON { data.append(contentsOf: $0) }
        return data
    }

    /// Writes `jsonData()` to `path`, its folder made when missing, through a file beside it
    /// that is renamed into place (a reader never sees half a report); the conflicts go to the
    /// file as they are written, not held whole in memory first.
    ///
    /// ```swift
    /// try report.writeJSON(to: "reports/nightly.json")
    /// ```
    public func writeJSON(to path: String) throws {
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let partial = folder.appendingPathComponent(".\(url.lastPathComponent).\(getpid()).partial").path
        unlink(partial)   // one an earlier process with the same pid left
        let descriptor = open(partial, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw FileAccessError(.write, path: partial, errno: errno)
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        do {
            defer { try? handle.close() }
            var writeback = WritebackStarter(descriptor: descriptor)
            defer { writeback.finish() }
            try encodeJSON { piece in
                try handle.write(contentsOf: piece)
                writeback.wrote(piece.count)
            }
            guard rename(partial, path) == 0 else {
                throw FileAccessError(.move, path: path, errno: errno)
            }
        } catch {
            unlink(partial)
            throw error
        }
    }

    /// The report's JSON, handed to `write` in pieces. The conflicts (the bulk of a large
    /// report) are written directly into their place: "conflicts" sorts first, so the encoded
    /// report without them begins with its empty array.
    private func encodeJSON(_ write: (UnsafeRawBufferPointer) throws -> Void) throws {
        func writeData(_ data: Data) throws { try data.withUnsafeBytes { try write($0) } }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        guard !conflicts.isEmpty else { return try writeData(encoder.encode(self)) }
        var rest = self
        rest.conflicts = []
        let encoded = try encoder.encode(rest)
        let empty = Data("{\n  \"conflicts\" : [\n\n  ],\n".utf8)
        guard encoded.starts(with: empty) else { return try writeData(encoder.encode(self)) }
        try writeData(Data("{\n  \"conflicts\" : [\n".utf8))
        try ConflictsJSON.write(conflicts, to: write)
        try writeData(Data("\n  ],\n".utf8))
        try writeData(encoded[(encoded.startIndex + empty.count)...])
    }
}

