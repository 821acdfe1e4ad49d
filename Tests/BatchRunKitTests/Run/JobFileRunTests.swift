import Foundation
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
}
