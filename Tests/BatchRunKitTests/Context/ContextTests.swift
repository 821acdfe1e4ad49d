import Foundation
import GRDB
import Testing
@testable import BatchRunKit
import TestSupport

/// The merge policies against each kind of conflict, on each backend (an SQLite file, a
/// PostgreSQL database), with the "someone else" writing between the context's read and its
/// save: a separate SQLite connection or the `sqlite3` program, `psql` on PostgreSQL. Outside
/// SQL names the table `"Account"` (quoted, the entity's table name), which both read.
@Suite("Context conflicts and merge policies")
struct ContextTests {
    /// Reads row 1, lets `outside` change the store, then applies `change` and saves.
    func conflict(_ backend: TestBackend, policy: MergePolicy, rule: RecomputeRule? = nil, outside: String,
                  change: @escaping @Sendable (ManagedObject, isolated Context) throws -> Void) async throws
        -> (store: TestStore, result: Result<SaveResult, any Error>)
    {
        let test = try TestStore(backend: backend)
        let context = Context(store: test.store, name: "job_a", mergePolicy: policy)
        if let rule { await context.perform { $0.recomputeRules["Account"] = rule } }
        let objects = try await context.perform { context in
            context.retainsRegisteredObjects = true   // the object is found again below, through registeredObjects
            return try context.fetch(FetchRequest(entity: "Account")).count
        }
        #expect(objects == 1)
        try test.outside(outside)
        let result = try await context.perform { context -> Result<SaveResult, any Error> in
            let object = context.registeredObjects[0]
            try change(object, context)
            return Result { try context.save() }
        }
        return (test, result)
    }

    static func setStatus(_ object: ManagedObject, _ context: isolated Context) throws { try object.set("status", to: .text("ours")) }

    @Test("the same property changed on both sides", arguments: TestBackend.allCases, [
        (MergePolicy.storeTrump, 99, "store", "kept_store"),
        (.objectTrump, 99, "ours", "merged"),
        (.overwrite, 10, "ours", "overwritten"),
        (.rollback, 99, "store", "rolled_back"),
        (.recompute, 99, "re", "recomputed"),
    ])
    func samePropertyBothSides(backend: TestBackend, expected: (MergePolicy, Int, String, String)) async throws {
        let (policy, balance, status, outcome) = expected
        let (test, result) = try await conflict(backend, policy: policy, rule: RecomputeRule(assignments: [("status", "'re'")]),
                                                outside: "UPDATE \"Account\" SET balance = 99, status = 'store' WHERE id = 1",
                                                change: Self.setStatus)
        defer { test.cleanUp() }
        let saved = try result.get()
        let row = try #require(try test.row(1))
        #expect(row.balance == balance && row.status == status)
        let conflict = try #require(saved.conflicts.first)
        #expect(saved.conflicts.count == 1)
        #expect(conflict.kind == .optimistic && conflict.outcome.rawValue == outcome && conflict.policy == policy)
        #expect(conflict.changedBy == "outside this run")
        #expect(conflict.objectID == ObjectID(entity: "Account", key: [.integer(1)]))
        let statusProperty = try #require(conflict.properties.first { $0.name == "status" })
        #expect(statusProperty.original == .text("open") && statusProperty.store == .text("store") && statusProperty.ours == .text("ours"))
        #expect(statusProperty.resolved == .text(status))
        #expect(conflict.properties.contains { $0.name == "balance" && $0.store == .integer(99) && $0.ours == .integer(10) })
    }

    @Test("different properties changed on each side: the by-property policies keep both",
          arguments: TestBackend.allCases, [MergePolicy.storeTrump, .objectTrump])
    func differentProperties(backend: TestBackend, policy: MergePolicy) async throws {
        let (test, result) = try await conflict(backend, policy: policy, outside: "UPDATE \"Account\" SET balance = 99 WHERE id = 1",
                                                change: Self.setStatus)
        defer { test.cleanUp() }
        #expect(try result.get().conflicts.first?.outcome == .merged)
        let row = try #require(try test.row(1))
        #expect(row.balance == 99 && row.status == "ours")
    }

    @Test("error: the save throws, nothing is written, the context keeps its changes", arguments: TestBackend.allCases)
    func errorPolicy(backend: TestBackend) async throws {
        let test = try TestStore(backend: backend)
        defer { test.cleanUp() }
        let context = Context(store: test.store, name: "job_a", mergePolicy: .error)
        try await context.perform { context in
            for object in try context.fetch(FetchRequest(entity: "Account")) { try object.set("status", to: .text("ours")) }
        }
        try test.outside("UPDATE \"Account\" SET balance = 99 WHERE id = 1")
        let failure = await context.perform { context -> MergeConflictError? in
            do { try context.save(); return nil } catch let error as MergeConflictError { return error } catch { return nil }
        }
        let error = try #require(failure)
        #expect(error.conflict.outcome == .failed && error.conflict.kind == .optimistic)
        #expect("\(error)".contains("Account(1) was changed by outside this run"))
        #expect(try test.row(1)?.status == "open")
        #expect(await context.hasChanges)
    }

    @Test("a row deleted in the store: only overwrite brings it back", arguments: TestBackend.allCases, [
        (MergePolicy.storeTrump, false, "kept_store"),
        (.objectTrump, false, "kept_store"),
        (.overwrite, true, "overwritten"),
        (.rollback, false, "rolled_back"),
        (.recompute, false, "recomputed"),
    ])
    func deletedInStore(backend: TestBackend, expected: (MergePolicy, Bool, String)) async throws {
        let (policy, exists, outcome) = expected
        let (test, result) = try await conflict(backend, policy: policy, outside: "DELETE FROM \"Account\" WHERE id = 1",
                                                change: Self.setStatus)
        defer { test.cleanUp() }
        let conflict = try #require(try result.get().conflicts.first)
        #expect(conflict.kind == .deleted && conflict.outcome.rawValue == outcome)
        #expect(conflict.properties.map(\.name) == ["status"])
        #expect(conflict.properties[0].store == nil)
        if exists {
            let row = try #require(try test.row(1))
            #expect(row.status == "ours" && row.balance == 10)
        } else {
            #expect(try test.row(1) == nil)
        }
    }

    @Test("this job's delete of a row changed in the store", arguments: TestBackend.allCases, [
        (MergePolicy.storeTrump, nil as String?, true, "kept_store"),
        (.objectTrump, nil, false, "kept_ours"),
        (.overwrite, nil, false, "overwritten"),
        (.rollback, nil, true, "rolled_back"),
        (.recompute, "balance < 50", true, "recomputed"),     // the row no longer matches: kept
        (.recompute, "balance > 50", false, "recomputed"),    // still matches as it is now: deleted
    ])
    func deleteOfChangedRow(backend: TestBackend, expected: (MergePolicy, String?, Bool, String)) async throws {
        let (policy, `where`, kept, outcome) = expected
        let (test, result) = try await conflict(backend, policy: policy, rule: RecomputeRule(deleteWhere: `where`),
                                                outside: "UPDATE \"Account\" SET balance = 99 WHERE id = 1",
                                                change: { object, context in context.delete(object) })
        defer { test.cleanUp() }
        let saved = try result.get()
        let conflict = try #require(saved.conflicts.first)
        #expect(conflict.kind == .optimistic && conflict.outcome.rawValue == outcome)
        #expect(conflict.properties.map(\.name) == ["balance"])
        #expect((try test.row(1) != nil) == kept)
        #expect(saved.deleted == (kept ? 0 : 1))
    }

    @Test("a delete of a row already deleted elsewhere is no conflict", arguments: TestBackend.allCases)
    func deleteOfDeletedRow(backend: TestBackend) async throws {
        let (test, result) = try await conflict(backend, policy: .error, outside: "DELETE FROM \"Account\" WHERE id = 1",
                                                change: { object, context in context.delete(object) })
        defer { test.cleanUp() }
        #expect(try result.get().conflicts.isEmpty)
    }

    @Test("constraint conflicts on insert", arguments: TestBackend.allCases, [
        (MergePolicy.storeTrump, "ann", 5 as Int?, "open", "merged"),        // only the NULL balance is filled
        (.objectTrump, "ann", 5, "new", "kept_ours"),
        (.recompute, "ann", 5, "new", "kept_ours"),
        (.overwrite, "ann", 5, "new", "overwritten"),
        (.rollback, "ann", nil, "open", "rolled_back"),
    ])
    func constraint(backend: TestBackend, expected: (MergePolicy, String, Int?, String, String)) async throws {
        let (policy, owner, balance, status, outcome) = expected
        let test = try TestStore(backend: backend)
        defer { test.cleanUp() }
        try test.outside("UPDATE \"Account\" SET balance = NULL WHERE id = 1")
        let context = Context(store: test.store, name: "importer", mergePolicy: policy)
        let saved = try await context.perform { context in
            try context.insert(into: "Account", values: ["id": .integer(1), "owner": .text("ann"), "balance": .integer(5),
                                                         "status": .text("new")])
            return try context.save()
        }
        let row = try #require(try test.row(1))
        #expect(row.owner == owner && row.balance == balance && row.status == status)
        let conflict = try #require(saved.conflicts.first)
        #expect(conflict.kind == .constraint && conflict.outcome.rawValue == outcome)
        #expect(conflict.changedBy == "outside this run")
        #expect(conflict.properties.map(\.name) == ["balance", "status"])
        #expect(conflict.properties.allSatisfy { $0.original == nil })
        #expect(conflict.properties[1].store == .text("open") && conflict.properties[1].ours == .text("new"))
    }

    @Test("a constraint conflict on a unique column other than the key finds the existing row", arguments: TestBackend.allCases)
    func uniqueColumnConflict(backend: TestBackend) async throws {
        let test = try TestStore(backend: backend)
        defer { test.cleanUp() }
        let context = Context(store: test.store, name: "importer", mergePolicy: .objectTrump)
        let saved = try await context.perform { context in
            try context.insert(into: "Account", values: ["id": .integer(7), "owner": .text("ann"), "balance": .integer(1)])
            return try context.save()
        }
        #expect(saved.conflicts.first?.objectID == ObjectID(entity: "Account", key: [.integer(1)]))
        #expect(try test.row(1)?.balance == 1)
        #expect(try test.row(7) == nil)
    }

    @Test("another program (sqlite3, psql) changing a row between read and save is caught and attributed outside this run",
          arguments: TestBackend.allCases)
    func anotherProgram(backend: TestBackend) async throws {
        let test = try TestStore(backend: backend)
        defer { test.cleanUp() }
        let context = Context(store: test.store, name: "job_a", mergePolicy: .objectTrump)
        try await context.perform { context in
            for object in try context.fetch(FetchRequest(entity: "Account")) { try object.set("status", to: .text("ours")) }
        }
        #expect(try test.outsideProgram("UPDATE \"Account\" SET balance = balance + 5 WHERE id = 1;") == 0)
        let saved = try await context.perform { try $0.save() }
        #expect(saved.conflicts.count == 1)
        #expect(saved.conflicts.first?.changedBy == "outside this run")
        let row = try #require(try test.row(1))
        #expect(row.balance == 15 && row.status == "ours")
    }

    @Test("a conflict names the job of this run that changed the row", arguments: TestBackend.allCases)
    func changedByAnotherJob(backend: TestBackend) async throws {
        let test = try TestStore(backend: backend)
        defer { test.cleanUp() }
        let reader = Context(store: test.store, name: "slow_reader", mergePolicy: .objectTrump)
        let writer = Context(store: test.store, name: "fast_writer")
        try await reader.perform { context in
            for object in try context.fetch(FetchRequest(entity: "Account")) { try object.set("status", to: .text("ours")) }
        }
        try await writer.perform { context in
            for object in try context.fetch(FetchRequest(entity: "Account")) { try object.set("balance", to: .integer(50)) }
            try context.save()
        }
        let saved = try await reader.perform { try $0.save() }
        #expect(saved.conflicts.first?.changedBy == "fast_writer")
        #expect(saved.conflicts.first?.record(entity: TestStore.model.entities[0]).key == ["id": .integer(1)])
    }
}

/// The set-based save a batch may use when nothing at all changed since its read, and the
/// set-based checked updates of a large batch.
@Suite("Bulk saves")
struct BulkSaveTests {
    func bulk(_ test: TestStore, _ first: Int, _ last: Int) -> BulkChange {
        BulkChange.keyRange(TestStore.model.entities[0], from: ObjectID(entity: "Account", key: [.integer(Int64(first))]),
                            to: ObjectID(entity: "Account", key: [.integer(Int64(last))]), params: [:]) { range in
            // 'bulk' marks the rows this statement wrote: the checked path leaves status alone.
            "UPDATE \"Account\" SET balance = (balance + 1), status = 'bulk' WHERE \(range)"
        }
    }

    @Test("with nothing committed since the read, the bulk statement saves the batch", arguments: TestBackend.allCases)
    func unchanged(backend: TestBackend) async throws {
        let test = try TestStore(rows: 5, backend: backend)
        defer { test.cleanUp() }
        let context = Context(store: test.store, name: "bump", mergePolicy: .error)
        let bulk = bulk(test, 2, 4)
        // On PostgreSQL "committed since" is server-wide: a commit by a test running at the same
        // time in another database sends a save down the checked path (which writes the same
        // balances, but no 'bulk'). So: batches until one takes the fast path, each correct.
        var attempts = 0
        while attempts < 50 {
            attempts += 1
            let result = try await context.perform { context in
                var request = FetchRequest(entity: "Account", where: "id BETWEEN 2 AND 4")
                request.assigning = [("balance", "balance + 1")]
                _ = try context.fetch(request)
                return try context.saveAndReset(bulk: bulk)
            }
            #expect(result.updated == 3 && result.conflicts.isEmpty)
            #expect(try (1...5).map { try test.row($0)?.balance } == [10] + Array(repeating: 10 + attempts, count: 3) + [10])
            if try test.row(3)?.status == "bulk" { break }
            if backend == .sqlite { break }   // nothing else writes to this file
        }
        #expect(try (1...5).map { try test.row($0)?.status } == ["open", "bulk", "bulk", "bulk", "open"], "after \(attempts) batches")
    }

    @Test("a commit by another program after the read sends the save down the checked path", arguments: TestBackend.allCases)
    func changedByAnotherProgram(backend: TestBackend) async throws {
        let test = try TestStore(rows: 5, backend: backend)
        defer { test.cleanUp() }
        let context = Context(store: test.store, name: "bump", mergePolicy: .objectTrump)
        let bulk = bulk(test, 2, 4)
        try await context.perform { context in
            var request = FetchRequest(entity: "Account", where: "id BETWEEN 2 AND 4")
            request.assigning = [("balance", "balance + 1")]
            _ = try context.fetch(request)
        }
        try test.outside("UPDATE \"Account\" SET balance = 50 WHERE id = 3")
        let result = try await context.perform { try $0.save(bulk: bulk) }
        // Row 3 changed: a conflict resolved by object-trump (our value, 11, computed from the read).
        #expect(result.conflicts.map(\.objectID) == [ObjectID(entity: "Account", key: [.integer(3)])])
        #expect(result.conflicts.first?.changedBy == "outside this run")
        #expect(try (1...5).map { try test.row($0)?.balance } == [10, 11, 11, 11, 10])
        #expect(try (1...5).map { try test.row($0)?.status } == ["open", "open", "open", "open", "open"])
    }

    @Test("a commit by another job after the read sends the save down the checked path", arguments: TestBackend.allCases)
    func changedByAnotherJob(backend: TestBackend) async throws {
        let test = try TestStore(rows: 3, backend: backend)
        defer { test.cleanUp() }
        let context = Context(store: test.store, name: "bump", mergePolicy: .storeTrump)
        let other = Context(store: test.store, name: "other")
        let bulk = bulk(test, 1, 3)
        try await context.perform { context in
            var request = FetchRequest(entity: "Account")
            request.assigning = [("balance", "balance + 1")]
            _ = try context.fetch(request)
        }
        try await other.perform { context in
            try context.existingObject(with: ObjectID(entity: "Account", key: [.integer(2)]))!.set("balance", to: .integer(70))
            try context.save()
        }
        let result = try await context.perform { try $0.save(bulk: bulk) }
        #expect(result.conflicts.first?.changedBy == "other")
        #expect(try (1...3).map { try test.row($0)?.balance } == [11, 70, 11])
        #expect(try (1...3).map { try test.row($0)?.status } == ["open", "open", "open"])
    }

    @Test("contention: rows changed since the read are resolved one by one, the rest written set-based",
          arguments: TestBackend.allCases,
          [(MergePolicy.objectTrump, "merged", 11, "held"), (.storeTrump, "merged", 11, "held"), (.rollback, "rolled_back", 10, "held")])
    func contention(backend: TestBackend, expected: (MergePolicy, String, Int, String)) async throws {
        let (policy, outcome, balance, status) = expected
        let rows = 1200   // more than one set-based statement (500 rows)
        let test = try TestStore(rows: rows, backend: backend)
        defer { test.cleanUp() }
        let context = Context(store: test.store, name: "bump", mergePolicy: policy)
        let fetched = try await context.perform { context in
            var request = FetchRequest(entity: "Account")
            request.assigning = [("balance", "balance + 1")]
            return try context.fetch(request).count
        }
        #expect(fetched == rows)
        // Another program changes 1% of the rows (another column) between the read and the save.
        let changed = Array(stride(from: 7, through: rows, by: 100))
        try test.outside("UPDATE \"Account\" SET status = 'held' WHERE id IN (\(changed.map(String.init).joined(separator: ",")))")
        let result = try await context.perform { try $0.save() }
        #expect(result.conflicts.map(\.objectID) == changed.map { ObjectID(entity: "Account", key: [.integer(Int64($0))]) })
        #expect(result.conflicts.allSatisfy { $0.kind == .optimistic && $0.outcome.rawValue == outcome })
        #expect(result.updated == rows - (policy == .rollback ? changed.count : 0))
        for id in [1, 6, 8, 500, 501, rows] {
            let row = try test.row(id)
            #expect(row?.balance == 11 && row?.status == "open")
        }
        for id in changed {
            let row = try test.row(id)
            #expect(row?.balance == balance && row?.status == status)
        }
    }
}
