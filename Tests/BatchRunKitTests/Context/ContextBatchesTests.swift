import Foundation
import Synchronization
import Testing
@testable import BatchRunKit
import TestSupport

/// The batch loop of `batch-update` and `delete` in a job's context, on both backends: every
/// row once, counts and `DidSave`s as for any save, and on PostgreSQL batches read inside
/// their save while nothing else is committed.
@Suite("Context batches")
struct ContextBatchesTests {
    static let entity = TestStore.model.entities[0]

    func environment(batchSize: Int) -> StepEnvironment {
        StepEnvironment(job: "bump", entity: Self.entity, params: [:], batchSize: batchSize, mergePolicy: .objectTrump)
    }

    /// `balance + 1` over the batch's key range, as `batch-update` builds it.
    func bump(_ first: ObjectID, _ last: ObjectID) -> BulkChange {
        BulkChange.keyRange(Self.entity, from: first, to: last, params: [:]) { range in
            "UPDATE \"Account\" SET balance = (balance + 1) WHERE \(range)"
        }
    }

    @Test("a batch-update changes every row once, in batches, and names every row it saved", arguments: TestBackend.allCases)
    func updateInBatches(backend: TestBackend) async throws {
        let test = try TestStore(rows: 12, backend: backend)
        defer { test.cleanUp() }
        let context = Context(store: test.store, name: "bump", mergePolicy: .objectTrump)
        let saved = Mutex<[ObjectID]>([])
        await context.perform { $0.didSaveBlock = { result in saved.withLock { $0 += result.didSave?.updated["Account"] ?? [] } } }
        let report = try await context.perform { context in
            var report = StepReport(kind: .batchUpdate, entity: "Account")
            var request = FetchRequest(entity: "Account")
            request.assigning = [("balance", "balance + 1")]
            try ContextBatches.run(request, in: environment(batchSize: 5), context: context, report: &report, change: .update,
                                   statement: bump)
            return report
        }
        #expect(report.rows.updated == 12 && report.batches.committed == 3 && report.conflicts == 0)
        #expect(try (1...12).map { try test.row($0)?.balance } == Array(repeating: 11, count: 12))
        let keys = saved.withLock { $0 }.map { id -> Int64 in if case .integer(let key)? = id.singleKey { key } else { -1 } }
        #expect(keys.sorted() == Array(1...12))
    }

    @Test("a delete in batches removes exactly the matching rows", arguments: TestBackend.allCases)
    func deleteInBatches(backend: TestBackend) async throws {
        let test = try TestStore(rows: 12, backend: backend)
        defer { test.cleanUp() }
        let context = Context(store: test.store, name: "prune", mergePolicy: .objectTrump)
        let report = try await context.perform { context in
            var report = StepReport(kind: .delete, entity: "Account")
            let request = FetchRequest(entity: "Account", where: "id % 2 = 0")
            try ContextBatches.run(request, in: environment(batchSize: 4), context: context, report: &report, change: .delete) { first, last in
                BulkChange.keyRange(Self.entity, from: first, to: last, params: [:]) { "DELETE FROM \"Account\" WHERE (id % 2 = 0) AND \($0)" }
            }
            return report
        }
        #expect(report.rows.deleted == 6 && report.batches.committed == 2)
        #expect(try (1...12).map { try test.row($0) != nil } == (1...12).map { $0 % 2 == 1 })
    }

    @Test("a later save that read a row before the batch-update names the batch-update's job", arguments: TestBackend.allCases)
    func changedByTheBatches(backend: TestBackend) async throws {
        let test = try TestStore(rows: 12, backend: backend)
        defer { test.cleanUp() }
        let reader = Context(store: test.store, name: "slow_reader", mergePolicy: .objectTrump)
        try await reader.perform { context in
            for object in try context.fetch(FetchRequest(entity: "Account", where: "id = 11")) { try object.set("status", to: .text("ours")) }
        }
        let context = Context(store: test.store, name: "bump", mergePolicy: .objectTrump)
        try await context.perform { context in
            var report = StepReport(kind: .batchUpdate, entity: "Account")
            var request = FetchRequest(entity: "Account")
            request.assigning = [("balance", "balance + 1")]
            try ContextBatches.run(request, in: environment(batchSize: 5), context: context, report: &report, change: .update,
                                   statement: bump)
        }
        let saved = try await reader.perform { try $0.save() }
        #expect(saved.conflicts.map(\.changedBy) == ["bump"])
    }

    /// The context's read of any row after the first batch fails (division by zero on
    /// PostgreSQL), so the step gets through only when batches 2 and 3 are read inside their
    /// saves. Commits by tests in other databases of the shared server (snapshots are
    /// server-wide) send a batch to the context's read: the step is tried until one run gets
    /// through, each run checked.
    @Test("on PostgreSQL, with nothing else committed, batches after the first are read inside their save")
    func readInsideTheSave() async throws {
        let test = try TestStore(rows: 12, backend: .postgres)
        defer { test.cleanUp() }
        var runs = 0, through = false
        while runs < 30 && !through {
            runs += 1
            let context = Context(store: test.store, name: "bump", mergePolicy: .objectTrump)
            let report = try? await context.perform { context in
                var report = StepReport(kind: .batchUpdate, entity: "Account")
                var request = FetchRequest(entity: "Account", where: "balance < 1000")
                request.assigning = [("balance", "CASE WHEN id > 5 THEN 1 / (id - id) ELSE balance + 1 END")]
                try ContextBatches.run(request, in: environment(batchSize: 5), context: context, report: &report, change: .update,
                                       statement: bump)
                return report
            }
            if let report {
                through = true
                #expect(report.rows.updated == 12 && report.batches.committed == 3)
            }
            // A run that failed stopped at a batch boundary: reset the rows it changed.
            try PostgresServer.psql(try #require(test.postgresURL), "UPDATE \"Account\" SET balance = 10")
        }
        #expect(through, "no run got through in \(runs)")
    }
}
