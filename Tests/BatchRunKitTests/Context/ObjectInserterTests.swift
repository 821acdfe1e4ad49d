import Foundation
import GRDB
import Testing
@testable import BatchRunKit

/// Saving inserted objects in multi-row statements, and falling back to one row at a time.
@Suite("Object inserts")
struct ObjectInserterTests {
    @Test("250 objects are written through the bulk loader, each object taking its row as stored",
          arguments: [false, true])
    func chunks(forgetting: Bool) async throws {
        let test = try TestStore(rows: 0)
        defer { test.cleanUp() }
        let context = Context(store: test.store, name: "insert")
        let (result, statuses) = try await context.perform { context -> (SaveResult, [StoreValue]) in
            let objects = try (1...250).map { id in
                try context.insert(into: "Account", values: ["id": StoreValue(id), "owner": "o\(id)", "balance": StoreValue(id)])
            }
            let result = forgetting ? try context.saveAndReset() : try context.save()
            return (result, try objects.map { try $0["status"] })
        }
        #expect(result.inserted == 250 && result.conflicts.isEmpty)
        // Defaults come back into the objects when the save keeps them.
        #expect(statuses == Array(repeating: forgetting ? .null : "open", count: 250))
        let (count, sum) = try await test.store.pool.read { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM Account")!, try Int.fetchOne(db, sql: "SELECT sum(balance) FROM Account")!)
        }
        #expect(count == 250 && sum == 250 * 251 / 2)
    }

    @Test("a taken key in the middle of a chunk: the chunk is written row by row and the policy resolves that row")
    func collisionInsideChunk() async throws {
        let test = try TestStore(rows: 0)
        defer { test.cleanUp() }
        try test.outside("INSERT INTO Account (id, owner, balance) VALUES (57, 'taken', 1)")
        let context = Context(store: test.store, name: "insert", mergePolicy: .objectTrump)
        let result = try await context.perform { context in
            for id in 1...120 {
                try context.insert(into: "Account", values: ["id": StoreValue(id), "owner": "o\(id)", "balance": 7])
            }
            return try context.save()
        }
        #expect(result.inserted == 119 && result.updated == 1)
        #expect(result.conflicts.map(\.objectID) == [ObjectID(entity: "Account", key: [57])])
        #expect(result.conflicts.first?.outcome == .keptOurs)
        #expect(try test.row(57)?.owner == "o57" && test.row(57)?.balance == 7)
        let count = try await test.store.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM Account")! }
        #expect(count == 120)
    }

    @Test("objects without a key get the rowid SQLite assigns, one row at a time")
    func assignedKeys() async throws {
        let test = try TestStore(rows: 0)
        defer { test.cleanUp() }
        let context = Context(store: test.store, name: "insert")
        let ids = try await context.perform { context -> [ObjectID?] in
            let objects = try (1...3).map { try context.insert(into: "Account", values: ["owner": "o\($0)"]) }
            try context.save()
            return objects.map(\.objectID)
        }
        #expect(ids == [1, 2, 3].map { ObjectID(entity: "Account", key: [.integer($0)]) })
    }
}
