import BatchRunKit
import Foundation
import Testing

/// `JobFileRun.recordedReport(of:in:)` as docs/library.md shows it: the latest run rebuilt from
/// the store's run state, after a failed run and its resume.
@Suite("Recorded reports from the library")
struct RecordedReportTests {
    @Test("a resumed run's recorded report lists its jobs in the file's order (not the order they ran), the one an earlier attempt finished marked done earlier")
    func resumedRunInFileOrder() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("batchrun-lib-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        // `zeta` runs first though the file lists it last; `alpha` fails on a row taken outside
        // the run, then resumes once it is gone.
        let file = try JobFileLoader().load(text: """
            version: 1
            store: s.sqlite
            entities:
              Item:
                columns: { id: integer primary key, name: text not null }
            jobs:
              alpha:
                needs: zeta
                merge_policy: error
                steps:
                  - insert: { entity: Item, rows: [{ id: 3, name: c }] }
              zeta:
                steps:
                  - insert: { entity: Item, rows: [{ id: 1, name: a }, { id: 2, name: b }] }
            """, path: folder.appendingPathComponent("job.yaml").path)
        let store = try Store(path: file.store.path, model: file.model)
        let blocker = Context(store: store, name: "outside")
        try await blocker.perform { context in
            try context.insert(into: "Item", values: ["id": 3, "name": "taken"])
            try context.save()
        }
        let first = await JobFileRun(file: file, store: store).run()
        #expect(first.status == .failed && first.jobs.map(\.name) == ["alpha", "zeta"])
        try await blocker.perform { context in
            for item in try context.fetch(FetchRequest(entity: "Item", where: "id = 3")) { context.delete(item) }
            try context.save()
        }

        let continuation = try #require(try RunContinuation.find(for: file, in: store))
        let resumed = await JobFileRun(file: file, store: store, continuing: continuation).run()
        #expect(resumed.status == .ok)
        let recorded = try #require(try JobFileRun.recordedReport(of: file, in: store))
        #expect(recorded.runID == resumed.runID && recorded.resumedFrom == first.runID && recorded.status == .ok)
        #expect(recorded.jobs.map(\.name) == ["alpha", "zeta"])
        #expect(recorded.jobs.map(\.resumed) == [nil, "done earlier"])
        #expect(recorded.jobs.map(\.rowsTotal.inserted) == [1, 2])
    }
}
