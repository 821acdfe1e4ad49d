import Foundation
import Synchronization
import GRDB
import Testing
@testable import BatchRunKit

/// Running a loaded job file from code.
@Suite("Job file runs")
struct JobFileRunTests {
    @Test("${env.VAR} is read at run time from the environment the loader checked, not the process's")
    func injectedEnvironment() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("batchrun-run-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let name = "BATCHRUN_TEST_ONLY_\(UUID().uuidString.prefix(8))"
        #expect(ProcessInfo.processInfo.environment[name] == nil)
        let text = """
            version: 1
            store: s.sqlite
            entities:
              Counter:
                columns: { id: integer primary key, n: integer }
            jobs:
              seed:
                steps:
                  - insert: { entity: Counter, rows: [{ id: 1, n: 0 }] }
              set:
                needs: seed
                steps:
                  - batch-update: { entity: Counter, set: { n: ":v" }, params: { v: "${env.\(name)}" } }
            """
        let file = try JobFileLoader(environment: [name: "42"]).load(text: text, path: folder.appendingPathComponent("job.yaml").path)
        let store = try Store(path: file.store.path, model: file.model)
        let report = await JobFileRun(file: file, store: store).run()
        #expect(report.status == .ok)
        let n = try await store.pool.read { db in try Int.fetchOne(db, sql: "SELECT n FROM Counter WHERE id = 1") }
        #expect(n == 42)
    }

    @Test("a running batch-update's fraction done is its rows so far of its where-clause's count (the progress line's and the live page's percent)")
    func batchUpdateFraction() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("batchrun-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try ("id,n\n" + (1...1000).map { "\($0),0\n" }.joined()).write(to: folder.appendingPathComponent("feed.csv"), atomically: true, encoding: .utf8)
        let text = """
            version: 1
            store: s.sqlite
            entities:
              Counter:
                columns: { id: integer primary key, n: integer }
            jobs:
              seed:
                steps:
                  - insert: { entity: Counter, from: feed.csv }
              mark:
                needs: seed
                batch_size: 100
                steps:
                  - batch-update: { entity: Counter, where: "id > 200", set: { n: "1" } }
            """
        let file = try JobFileLoader().load(text: text, path: folder.appendingPathComponent("job.yaml").path)
        let store = try Store(path: file.store.path, model: file.model)
        let run = JobFileRun(file: file, store: store)
        let seen = Mutex<[(rows: Int, fraction: Double?)]>([])
        let report = await run.run { event in
            if case .progress(job: "mark", step: _, rows: let rows) = event {
                seen.withLock { $0.append((rows.updated, run.liveFractions()["mark"])) }
            }
        }
        #expect(report.status == .ok)
        let fractions = seen.withLock { $0 }
        #expect(Set(fractions.map(\.rows)) == Set(stride(from: 100, through: 800, by: 100)), "one event a batch (and one at the step's end)")
        for (rows, fraction) in fractions { #expect(fraction == Double(rows) / 800, "\(rows) rows") }
        #expect(run.liveFractions()["mark"] == nil, "nothing once the job ended")
    }
}
