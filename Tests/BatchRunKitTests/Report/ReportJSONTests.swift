import Foundation
import Testing
@testable import BatchRunKit

/// The JSON report's conflicts, written directly, are byte for byte what `JSONEncoder` writes.
@Suite("Report JSON")
struct ReportJSONTests {
    @Test("conflicts written directly match JSONEncoder's output exactly")
    func conflictsMatchEncoder() throws {
        let tricky = "quote \" backslash \\ slash / newline \n tab \t bell \u{07} é ✓"
        let conflicts = [
            MergeConflictRecord(job: "load", entity: "Reading", key: ["id": .integer(41)], kind: .constraint, policy: .objectTrump,
                                outcome: .keptOurs, changedBy: "outside this run", properties: [
                                    .init(name: "value", original: .null, store: .real(10), ours: .real(0.1), resolved: .real(1e-7)),
                                    .init(name: "note", original: .text(tricky), store: .text(""), ours: .integer(-3),
                                          resolved: .real(12345678.9)),
                                ]),
            MergeConflictRecord(job: "j2", entity: "Pair", key: ["b": .text("x"), "a": .integer(1)], kind: .optimistic,
                                policy: .storeTrump, outcome: .keptStore, changedBy: "load", properties: []),
        ]
        let report = RunReport(file: "job.yaml", store: "s.sqlite", status: .ok, startedAt: Date(timeIntervalSince1970: 1_800_000_000),
                               elapsedSeconds: 1.25, jobs: [], conflicts: conflicts)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        let expected = try encoder.encode(report)
        let written = try report.jsonData()
        #expect(String(decoding: written, as: UTF8.self) == String(decoding: expected, as: UTF8.self))
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let decoded = try decoder.decode(RunReport.self, from: written)
        #expect(decoded.conflicts.map(\.key) == conflicts.map(\.key) && decoded.conflicts[0].properties[1].original == .text(tricky))
    }

    @Test("a report of 5,000 conflicts written to a file in pieces is JSONEncoder's output; no partial file is left")
    func writtenToFileInPieces() throws {
        let values: [JSONValue] = [.integer(0), .integer(Int64.min), .integer(Int64.max), .integer(-7), .real(-0.5), .text("ü/\u{1F}")]
        let conflicts = (0..<5_000).map { index in
            MergeConflictRecord(job: "load", entity: "Reading", key: ["id": .integer(Int64(index) - 2_500)], kind: .constraint,
                                policy: .overwrite, outcome: .overwritten, changedBy: "load",
                                properties: [.init(name: "v", original: .null, store: values[index % values.count],
                                                   ours: values[(index + 1) % values.count], resolved: .integer(Int64(index) * 1_000_003))])
        }
        let report = RunReport(file: "job.yaml", store: "s.sqlite", startedAt: Date(timeIntervalSince1970: 1_800_000_000),
                               elapsedSeconds: 2, conflicts: conflicts)
        let (written, files) = try Self.written(report, times: 1, in: "nested")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        #expect(written.count > 1 << 20, "one piece only: \(written.count) bytes")
        #expect(written == (try encoder.encode(report)))
        #expect(files == ["r.json"])
    }

    @Test("a report of 40 MB, its writeback started while it is written, is on disk exactly as its JSON; no partial file is left")
    func largeReportWrittenWhole() throws {
        let report = Self.largeReport(conflicts: 40_000)
        // Twice: the second rename replaces the first report.
        let (written, files) = try Self.written(report, times: 2, in: ".")
        #expect(written.count > 32 << 20, "\(written.count) bytes: fewer than four writeback steps")
        #expect(written == (try report.jsonData()))
        #expect(files == ["r.json"])
    }

    /// A report of `conflicts` conflicts of about 900 bytes of JSON each.
    private static func largeReport(conflicts count: Int) -> RunReport {
        let note = String(repeating: "0123456789abcdef", count: 40)
        let conflicts = (0..<count).map { index in
            MergeConflictRecord(job: "load", entity: "Reading", key: ["id": .integer(Int64(index))], kind: .constraint,
                                policy: .objectTrump, outcome: .keptOurs, changedBy: "outside this run",
                                properties: [.init(name: "note", original: .null, store: .text("\(index) " + note), ours: .text(note),
                                                   resolved: .text(note))])
        }
        return RunReport(file: "job.yaml", store: "s.sqlite", startedAt: Date(timeIntervalSince1970: 1_800_000_000),
                         elapsedSeconds: 2, conflicts: conflicts)
    }

    /// `report` written `times` to `r.json` in `subfolder` of a new folder (made by `writeJSON`):
    /// the file's bytes, and the files left in that subfolder.
    private static func written(_ report: RunReport, times: Int, in subfolder: String) throws -> (Data, [String]) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("report-json-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let target = folder.appendingPathComponent(subfolder)
        for _ in 0..<times { try report.writeJSON(to: target.appendingPathComponent("r.json").path) }
        return (try Data(contentsOf: target.appendingPathComponent("r.json")), try FileManager.default.contentsOfDirectory(atPath: target.path))
    }

    @Test("a report that cannot be renamed into place (a folder is there) fails, after its writeback began, and leaves no partial file")
    func renameFailureLeavesNothing() throws {
        let report = Self.largeReport(conflicts: 20_000)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("report-json-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let target = folder.appendingPathComponent("r.json")
        try FileManager.default.createDirectory(at: target.appendingPathComponent("inside"), withIntermediateDirectories: true)
        #expect(throws: (any Error).self) { try report.writeJSON(to: target.path) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["r.json"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: target.path) == ["inside"])
        #expect(try report.jsonData().count > 16 << 20, "too small for the writeback to begin")
    }

    @Test("a conflict larger than a piece (a 300,000-character text, every character escaped) is written whole, as JSONEncoder writes it")
    func conflictLargerThanAPiece() throws {
        let huge = String(repeating: "\u{01}\"", count: 150_000)
        let conflicts = ["before", huge, "after"].map { text in
            MergeConflictRecord(job: "load", entity: "Note", key: ["id": .integer(1)], kind: .constraint, policy: .objectTrump,
                                outcome: .keptOurs, changedBy: "outside this run",
                                properties: [.init(name: "body", original: .null, store: .text(text), ours: .text("x"), resolved: .text("x"))])
        }
        let report = RunReport(file: "job.yaml", store: "s.sqlite", startedAt: Date(timeIntervalSince1970: 1_800_000_000),
                               elapsedSeconds: 1, conflicts: conflicts)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        let written = try report.jsonData()
        #expect(written.count > 1 << 20)
        #expect(written == (try encoder.encode(report)))
    }
}
