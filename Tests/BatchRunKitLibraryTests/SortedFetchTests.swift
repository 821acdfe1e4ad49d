import BatchRunKit
import Foundation
import TestSupport
import Testing

/// Object fetches in an order of one's choosing, and many objects fetched by ID at once.
@Suite("Sorted fetches and fetches by ID")
struct SortedFetchTests {
    /// Six sessions whose minutes and users tie, with a NULL among the minutes.
    static func seed(_ test: SessionStore) async throws {
        let rows: [(Int, String, Double?)] = [(1, "carol", 30), (2, "alice", 10), (3, "bob", nil),
                                              (4, "alice", 30), (5, "dave", 10), (6, "bob", 20)]
        try await Context(store: test.store, name: "seed").perform { context in
            for (id, user, minutes) in rows {
                try context.insert(into: "Session", values: ["id": StoreValue(id), "user": StoreValue(user),
                                                             "minutes": minutes.map { StoreValue.real($0) } ?? .null])
            }
            try context.save()
        }
    }

    static func ids(_ objects: [ManagedObject]) throws -> [Int] { try objects.map { try $0["id"].int ?? -1 } }

    @Test("sortedBy orders objects by several columns, each way, NULL first ascending and last descending, ties by key: the same order on both backends", arguments: Backend.allCases)
    @MainActor
    func sortedBy(backend: Backend) async throws {
        let test = try SessionStore(backend)
        defer { test.cleanUp() }
        try await Self.seed(test)
        let cases: [([RowRequest.Order], [Int])] = [
            ([.descending("minutes"), .ascending("user")], [4, 1, 6, 2, 5, 3]),
            ([.ascending("minutes")], [3, 2, 5, 6, 1, 4]),
            ([.ascending("user"), .descending("id")], [4, 2, 6, 3, 1, 5]),
            ([], [1, 2, 3, 4, 5, 6]),
        ]
        let main = MainContext(store: test.store)
        let context = Context(store: test.store, name: "reader")
        for (sort, expected) in cases {
            var request = FetchRequest(entity: "Session")
            request.sortedBy = sort
            #expect(try Self.ids(await main.fetch(request)) == expected, "\(sort)")
            #expect(try Self.ids(main.fetchNow(request)) == expected, "\(sort)")
            let fixed = request
            let fromPrivate = try await context.perform { try Self.ids($0.fetch(fixed)) }
            #expect(fromPrivate == expected, "\(sort)")
        }
        var firstTwo = FetchRequest(entity: "Session", where: "minutes IS NOT NULL", limit: 2)
        firstTwo.sortedBy = [.descending("minutes"), .descending("user")]
        #expect(try Self.ids(main.fetchNow(firstTwo)) == [1, 4])
        var typo = FetchRequest(entity: "Session")
        typo.sortedBy = [.ascending("minuts")]
        let error = #expect(throws: ContextError.self) { try main.fetchNow(typo).count }
        #expect(error?.description == "entity Session has no column minuts")
    }

    @Test("existingObjects returns the objects of 4,165 IDs in their order: a registered one as it is, nil for a row that is gone", arguments: Backend.allCases)
    @MainActor
    func existingObjects(backend: Backend) async throws {
        let test = try SessionStore(backend)
        defer { test.cleanUp() }
        try await test.seed(5_000)
        let main = MainContext(store: test.store)
        let held = try main.fetchNow(FetchRequest(entity: "Session", where: "id = 4000"))[0]
        try held.set("minutes", to: 1)   // unsaved: existingObjects gives this instance, not the row
        let wanted = [4_000] + (1...4_165).reversed().filter { $0 != 4_000 } + [99_999]
        let ids = wanted.map { ObjectID(entity: "Session", key: [StoreValue($0)]) }
        let objects = try main.existingObjects(with: ids)
        #expect(objects.count == wanted.count)
        #expect(objects[0] === held)
        #expect(objects.last! == nil)
        let found = try objects.dropLast().map { try $0?["id"].int ?? -1 }
        #expect(found == Array(wanted.dropLast()))
        #expect(try objects[1]?["minutes"] == .real(10))
        let fromPrivate = try await Context(store: test.store, name: "reader").perform { context in
            try context.existingObjects(with: ids).map { try $0?["id"].int }
        }
        #expect(fromPrivate == wanted.dropLast().map { $0 } + [nil])
    }
}
