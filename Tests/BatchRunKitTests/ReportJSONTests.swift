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
}
