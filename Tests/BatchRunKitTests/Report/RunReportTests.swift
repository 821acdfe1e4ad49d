import BatchRunKit
import Foundation
import Testing

/// The JSON report read back, with the keys added for the HTML report.
@Suite("Run reports")
struct RunReportTests {
    @Test("a report read from its JSON equals the report; started_s is null for a job that never started, resumed only when set")
    func roundTrip() throws {
        let report = RunReport(
            file: "jobs/nightly.yaml", store: "var/nightly.sqlite", status: .failed,
            startedAt: Date(timeIntervalSince1970: 1_790_000_000), elapsedSeconds: 2.5,
            jobs: [
                JobReport(name: "load", status: .ok, queuedSeconds: 0.01, runSeconds: 1.25, attempts: 1,
                          rows: RowCounts(inserted: 2000), batches: BatchCounts(committed: 4),
                          steps: [StepReport(kind: .insert, entity: "Session", runSeconds: 1.2, rows: RowCounts(inserted: 2000))],
                          startedSeconds: 0.001, resumed: "done earlier"),
                JobReport(name: "after", status: .skipped, needs: ["load"], skippedBecause: "load failed"),
            ],
            conflicts: [MergeConflictRecord(job: "load", entity: "Session", key: ["id": .integer(41)], kind: .constraint,
                                            policy: .objectTrump, outcome: .keptOurs, changedBy: "outside this run",
                                            properties: [.init(name: "minutes", original: .null, store: .real(10.5),
                                                               ours: .real(11.5), resolved: .text("<b>"))])])
        let data = try report.jsonData()
        #expect(try RunReport(jsonData: data) == report)
        let jobs = try #require((try JSONSerialization.jsonObject(with: data) as? [String: Any])?["jobs"] as? [[String: Any]])
        #expect(jobs[0]["started_s"] as? Double == 0.001 && jobs[1]["started_s"] is NSNull)
        #expect(jobs[0]["resumed"] as? String == "done earlier" && jobs[1]["resumed"] == nil)
        #expect(throws: DecodingError.self) { try RunReport(jsonData: Data(#"{ "schema": 1 }"#.utf8)) }
    }

    @Test("a run sets each started job's started_s: after the run's start, a dependent after its need ended")
    func startedSeconds() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("batchrun-report-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("job.yaml").path
        try """
            version: 1
            store: store.sqlite
            entities:
              T: { columns: { id: integer primary key } }
            jobs:
              first: { steps: [{ insert: { entity: T, rows: [{ id: 1 }, { id: 2 }] } }] }
              second: { needs: first, steps: [{ fetch: { entity: T } }] }
              broken: { steps: [{ insert: { entity: T, rows: [{ id: 1 }] } }] }
              never: { needs: broken, steps: [{ fetch: { entity: T } }] }
            """.write(toFile: path, atomically: true, encoding: .utf8)
        let file = try JobFileLoader().load(path: path)
        let store = try Store(path: file.store.path, model: file.model, busyTimeout: file.store.busyTimeout)
        let report = await JobFileRun(file: file, store: store, maxConcurrent: 1).run()
        let jobs = Dictionary(uniqueKeysWithValues: report.jobs.map { ($0.name, $0) })
        let first = try #require(jobs["first"]?.startedSeconds), second = try #require(jobs["second"]?.startedSeconds)
        #expect(first >= 0 && second >= first + jobs["first"]!.runSeconds && second <= report.elapsedSeconds)
        #expect(jobs["broken"]?.status == .failed && jobs["broken"]?.startedSeconds != nil)
        #expect(jobs["never"]?.status == .skipped && jobs["never"]?.startedSeconds == nil)
    }
}
