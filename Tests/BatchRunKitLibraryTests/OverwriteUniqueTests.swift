import BatchRunKit
import Foundation
import TestSupport
import Testing

/// Merge policy `overwrite` when an insert collides on a unique column held by another row:
/// that row is deleted (its delete rules run, other contexts drop it, it is counted as
/// deleted) and the new row is inserted under its own key; a row replaced under its own key
/// stays one updated row. Both databases, the public API only.
@Suite("Overwrite of a unique value")
struct OverwriteUniqueTests {
    /// Products with a unique `code`; parts refer to their product with `partRule`.
    static func model(partRule: DeleteRule) -> Model {
        Model(entities: [
            Entity(name: "Product", columns: [
                Column(name: "id", type: .integer, isPrimaryKey: true),
                Column(name: "code", type: .text, isUnique: true),
            ], primaryKey: ["id"]),
            Entity(name: "Part", columns: [
                Column(name: "id", type: .integer, isPrimaryKey: true),
                Column(name: "product_id", type: .integer),
            ], primaryKey: ["id"], relationships: [
                Relationship(name: "product", destination: "Product", column: "product_id", deleteRule: partRule),
            ]),
        ])
    }

    /// A fresh store with products 1 (code x) and 3 (code z), parts 10 and 11 of product 1 and
    /// 12 of product 3.
    static func store(_ backend: Backend, partRule: DeleteRule = .cascade) async throws -> (Store, URL) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("batchrun-ow-\(UUID().uuidString)")
        let store = switch backend {
        case .sqlite: try Store(path: folder.appendingPathComponent("shop.sqlite").path, model: model(partRule: partRule))
        case .postgres: try Store(postgres: PostgresServer.database("owu"), model: model(partRule: partRule))
        }
        try await Context(store: store, name: "seed").perform { context in
            for (id, code) in [(1, "x"), (3, "z")] { try context.insert(into: "Product", values: ["id": StoreValue(id), "code": StoreValue(code)]) }
            for (id, product) in [(10, 1), (11, 1), (12, 3)] {
                try context.insert(into: "Part", values: ["id": StoreValue(id), "product_id": StoreValue(product)])
            }
            try context.save()
        }
        return (store, folder)
    }

    /// Every row of `entity` as `[id: column value]`, read through a fresh context.
    static func column(_ column: String, of entity: String, in store: Store) async throws -> [Int: StoreValue] {
        try await Context(store: store, name: "check").perform { context in
            var rows: [Int: StoreValue] = [:]
            for object in try context.fetch(FetchRequest(entity: entity)) { rows[try object["id"].int!] = try object[column] }
            return rows
        }
    }

    static func product(_ id: Int) -> ObjectID { ObjectID(entity: "Product", key: [.integer(Int64(id))]) }
    static func part(_ id: Int) -> ObjectID { ObjectID(entity: "Part", key: [.integer(Int64(id))]) }

    @Test("an insert taking another row's unique value deletes that row (cascading to its parts) and inserts the new one; the DidSave, the counts, the saving context, another context and live results all say so", arguments: Backend.allCases)
    @MainActor
    func otherRowDeleted(_ backend: Backend) async throws {
        let (store, folder) = try await Self.store(backend)
        defer { try? FileManager.default.removeItem(at: folder) }
        let main = MainContext(store: store)
        let held = try #require(try main.existingObject(with: Self.product(1)))
        #expect(main.registeredObjects.contains { $0 === held })
        var request = FetchRequest(entity: "Product")
        request.sortedBy = [.ascending("id")]
        var live = main.results(for: request).makeAsyncIterator()
        let first = try #require(try await live.next())
        #expect(first.items.map { $0["id"]?.int } == [1, 3])

        let writer = Context(store: store, name: "ops", mergePolicy: .overwrite)
        let (result, insertedID, registeredIDs, replacedIsDeleted) = try await writer.perform { context in
            let replaced = try context.existingObject(with: Self.product(1))   // registered in the saving context too
            let product = try context.insert(into: "Product", values: ["id": 2, "code": "x"])
            let result = try context.save()
            return (result, product.objectID, Set(context.registeredObjects.compactMap(\.objectID)), replaced?.isDeleted)
        }
        #expect(result.inserted == 1 && result.updated == 0 && result.deleted == 1)
        let didSave = try #require(result.didSave)
        #expect(didSave.inserted["Product"] == [Self.product(2)])
        #expect(didSave.updated["Product"] == nil)
        #expect(didSave.deleted["Product"] == [Self.product(1)])
        #expect(Set(didSave.deleted["Part"] ?? []) == [Self.part(10), Self.part(11)])
        #expect(result.conflicts.map(\.outcome) == [.overwritten])
        // The saving context: the new object has its own key and is registered; the replaced one is gone.
        #expect(insertedID == Self.product(2))
        #expect(registeredIDs.contains(Self.product(2)) && !registeredIDs.contains(Self.product(1)))
        #expect(replacedIsDeleted == true)

        #expect(try await Self.column("code", of: "Product", in: store) == [2: "x", 3: "z"])
        #expect(try await Self.column("product_id", of: "Part", in: store) == [12: 3])

        // Another context drops the deleted row once it merged the save; live results follow.
        await main.catchUp()
        #expect(!main.registeredObjects.contains { $0.objectID == Self.product(1) })
        let after = try #require(try await live.next())
        #expect(after.items.map { $0["id"]?.int } == [2, 3])
        #expect(after.change.deleted == [0] && after.change.inserted == [0] && after.change.updated.isEmpty)
        withExtendedLifetime(held) {}
    }

    @Test("a row replaced under its own key stays one updated row (no delete rules for it); another row holding the unique value is deleted", arguments: Backend.allCases)
    func sameKeyUpdated(_ backend: Backend) async throws {
        let (store, folder) = try await Self.store(backend)
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = try await Context(store: store, name: "ops", mergePolicy: .overwrite).perform { context in
            try context.insert(into: "Product", values: ["id": 3, "code": "x"])   // key 3 is taken, code x is product 1's
            return try context.save()
        }
        #expect(result.inserted == 0 && result.updated == 1 && result.deleted == 1)
        let didSave = try #require(result.didSave)
        #expect(didSave.updated["Product"] == [Self.product(3)] && didSave.inserted["Product"] == nil)
        #expect(didSave.deleted["Product"] == [Self.product(1)])
        #expect(try await Self.column("code", of: "Product", in: store) == [3: "x"])
        #expect(try await Self.column("product_id", of: "Part", in: store) == [12: 3])   // product 3's part stays
    }

    @Test("an update re-creating its row deleted in the store deletes the row that took its unique value meanwhile, and says so", arguments: Backend.allCases)
    func recreatedRowReplaces(_ backend: Backend) async throws {
        let (store, folder) = try await Self.store(backend)
        defer { try? FileManager.default.removeItem(at: folder) }
        let writer = Context(store: store, name: "ops", mergePolicy: .overwrite)
        let held = try await writer.perform { context in
            let product = try context.existingObject(with: Self.product(3))!
            try product.set("code", to: "q")
            return product.objectID
        }
        #expect(held == Self.product(3))
        // Meanwhile someone deletes product 3 and gives its code to a new product 5 (its part goes too).
        try await Context(store: store, name: "other").perform { context in
            context.delete(try context.existingObject(with: Self.product(3))!)
            try context.save()
            try context.insert(into: "Product", values: ["id": 5, "code": "q"])
            try context.save()
        }
        let result = try await writer.perform { try $0.save() }
        #expect(result.updated == 1 && result.deleted == 1)
        #expect(result.didSave?.updated["Product"] == [Self.product(3)] && result.didSave?.deleted["Product"] == [Self.product(5)])
        #expect(try await Self.column("code", of: "Product", in: store) == [1: "x", 3: "q"])
    }

    @Test("deny on the replaced row's parts refuses the save; nothing is written", arguments: Backend.allCases)
    func denyRefuses(_ backend: Backend) async throws {
        let (store, folder) = try await Self.store(backend, partRule: .deny)
        defer { try? FileManager.default.removeItem(at: folder) }
        let refusal = try await Context(store: store, name: "ops", mergePolicy: .overwrite).perform { context -> ContextError? in
            try context.insert(into: "Product", values: ["id": 2, "code": "x"])
            do {
                try context.save()
                return nil
            } catch let error as ContextError {
                return error
            }
        }
        guard case .deleteDenied(let entity, let relationship, let count)? = refusal else {
            Issue.record("expected deleteDenied, got \(String(describing: refusal))")
            return
        }
        #expect(entity == "Product" && relationship == "Part.product" && count == 2)
        #expect(try await Self.column("code", of: "Product", in: store) == [1: "x", 3: "z"])
        #expect(try await Self.column("product_id", of: "Part", in: store) == [10: 1, 11: 1, 12: 3])
    }
}
