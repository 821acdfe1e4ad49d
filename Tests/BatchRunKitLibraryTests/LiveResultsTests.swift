import BatchRunKit
import Foundation
import TestSupport
import Testing

/// `results(for:)` as docs/library.md shows it: live results of a request, kept up to date
/// save by save, with the exact indexes of what changed.
@Suite("Live results")
struct LiveResultsTests {
    /// A `Session` as a typed record.
    struct Session: Record, Equatable {
        static let entity = "Session"
        var id: Int
        var user: String
        var minutes: Double?
        var started_at: Date?
        var status: String
    }

    /// Runs `body` in a private context of `store` named "writer", and saves.
    static func save(_ store: Store, _ body: @escaping @Sendable (isolated Context) throws -> Void) async throws {
        let writer = Context(store: store, name: "writer")
        try await writer.perform { context in
            try body(context)
            try context.save()
        }
    }

    static func set(_ store: Store, id: Int, _ column: String, to value: StoreValue) async throws {
        try await save(store) { context in
            try context.existingObject(with: ObjectID(entity: "Session", key: [.integer(Int64(id))]))!.set(column, to: value)
        }
    }

    static func ids(_ snapshot: ResultsSnapshot<ResultRow>) -> [Int] { snapshot.items.map { $0["id"]?.int ?? -1 } }
    static func moves(_ change: ResultsChange) -> [[Int]] { change.moves.map { [$0.from, $0.to] } }

    @Test("main context: the first snapshot has every row inserted; then updates that move a row, leave or enter the filter, inserts and deletes by another context each yield their exact indexes, after the main context merged the save", arguments: Backend.allCases)
    @MainActor
    func mainContext(backend: Backend) async throws {
        let test = try SessionStore(backend)
        defer { test.cleanUp() }
        try await test.seed(5)   // ids 1...5, minutes 10
        let main = MainContext(store: test.store)
        let held = try await main.fetch(FetchRequest(entity: "Session", where: "id = 3"))[0]
        var request = FetchRequest(entity: "Session", where: "minutes >= 10")
        request.sortedBy = [.descending("minutes")]   // ties in key order
        var results = main.results(for: request).makeAsyncIterator()

        let first = try await results.next()!
        #expect(Self.ids(first) == [1, 2, 3, 4, 5])
        #expect(first.change.inserted == [0, 1, 2, 3, 4] && first.change.deleted.isEmpty && first.change.moves.isEmpty)
        #expect(first.ids == (1...5).map { ObjectID(entity: "Session", key: [.integer(Int64($0))]) })
        #expect(first.sections.isEmpty)

        try await Self.set(test.store, id: 3, "minutes", to: 50)   // moves to the front
        let moved = try await results.next()!
        #expect(Self.ids(moved) == [3, 1, 2, 4, 5])
        #expect(moved.change.updated == [0] && Self.moves(moved.change) == [[2, 0]])
        #expect(moved.change.inserted.isEmpty && moved.change.deleted.isEmpty)
        #expect(try held["minutes"] == .real(50), "yielded after the main context merged the save")

        try await Self.set(test.store, id: 4, "minutes", to: 5)    // leaves the filter
        let left = try await results.next()!
        #expect(Self.ids(left) == [3, 1, 2, 5])
        #expect(left.change.deleted == [3] && left.change.inserted.isEmpty && left.change.updated.isEmpty && left.change.moves.isEmpty)

        try await Self.save(test.store) { try $0.insert(into: "Session", values: ["id": 6, "user": "new", "minutes": 20]) }
        let inserted = try await results.next()!
        #expect(Self.ids(inserted) == [3, 6, 1, 2, 5])
        #expect(inserted.change.inserted == [1] && inserted.change.deleted.isEmpty && inserted.change.moves.isEmpty)

        try await Self.save(test.store) { context in
            context.delete(try context.existingObject(with: ObjectID(entity: "Session", key: [1]))!)
        }
        let deleted = try await results.next()!
        #expect(Self.ids(deleted) == [3, 6, 2, 5])
        #expect(deleted.change.deleted == [2] && deleted.change.inserted.isEmpty && deleted.change.moves.isEmpty)

        try await Self.set(test.store, id: 4, "minutes", to: 30)   // enters the filter again
        let entered = try await results.next()!
        #expect(Self.ids(entered) == [3, 4, 6, 2, 5])
        #expect(entered.change.inserted == [1] && entered.change.updated.isEmpty && entered.change.deleted.isEmpty)
        #expect(entered.change.moves.isEmpty)
        #expect(entered.items[1]["minutes"] == .real(30))

        try await Self.set(test.store, id: 5, "user", to: "zed")   // changed, in place
        let updated = try await results.next()!
        #expect(Self.ids(updated) == [3, 4, 6, 2, 5])
        #expect(updated.change.updated == [4] && updated.change.moves.isEmpty && updated.change.inserted.isEmpty)
        #expect(updated.items[4]["user"] == "zed")

        try await Self.save(test.store) { context in   // two rows swap places in one save
            try context.existingObject(with: ObjectID(entity: "Session", key: [2]))!.set("minutes", to: 40)
            try context.existingObject(with: ObjectID(entity: "Session", key: [6]))!.set("minutes", to: 10)
        }
        let swapped = try await results.next()!
        #expect(Self.ids(swapped) == [3, 2, 4, 5, 6])
        #expect(swapped.change.updated == [1, 4] && swapped.change.inserted.isEmpty && swapped.change.deleted.isEmpty)
        // Old [3, 4, 6, 2, 5] to new [3, 2, 4, 5, 6]: 3, 4, 5 keep their order; 2 and 6 move.
        #expect(Self.moves(swapped.change) == [[3, 1], [2, 4]])
    }

    @Test("sections by a column: runs of equal values in the sorted results, with their keys, ranges and items; a row changing section moves", arguments: Backend.allCases)
    @MainActor
    func sections(backend: Backend) async throws {
        let test = try SessionStore(backend)
        defer { test.cleanUp() }
        try await test.seed(5)   // users: 1 user1, 2 user2, 3 user0, 4 user1, 5 user2
        let main = MainContext(store: test.store)
        var request = FetchRequest(entity: "Session")
        request.sortedBy = [.ascending("user")]
        var results = main.results(for: request, sectionedBy: "user").makeAsyncIterator()
        let first = try await results.next()!
        #expect(Self.ids(first) == [3, 1, 4, 2, 5])
        #expect(first.sections.map(\.key) == ["user0", "user1", "user2"])
        #expect(first.sections.map(\.range) == [0..<1, 1..<3, 3..<5])
        #expect(first.sections[1].items.map { $0["id"]?.int } == [1, 4])

        try await Self.set(test.store, id: 3, "user", to: "user2")
        let next = try await results.next()!
        #expect(Self.ids(next) == [1, 4, 2, 3, 5])
        #expect(next.sections.map(\.key) == ["user1", "user2"])
        #expect(next.sections.map(\.range) == [0..<2, 2..<5])
        #expect(next.change.updated == [3] && Self.moves(next.change) == [[0, 3]])
    }

    @Test("a private context's live results of typed records follow saves, its own among them; a limit is kept (a row leaving lets the next in)")
    func privateRecords() async throws {
        let test = try SessionStore(.sqlite)
        defer { test.cleanUp() }
        try await test.seed(4)
        let context = Context(store: test.store, name: "screen")
        var request = FetchRequest(entity: "Session", limit: 2)
        request.sortedBy = [.descending("minutes")]
        var results = context.results(for: request, as: Session.self).makeAsyncIterator()
        let first = try await results.next()!
        #expect(first.items.map(\.id) == [1, 2] && first.change.inserted == [0, 1])

        try await context.perform { context in
            try context.existingObject(with: ObjectID(entity: "Session", key: [4]))!.set("minutes", to: 99)
            try context.save()
        }
        let next = try await results.next()!
        #expect(next.items.map(\.id) == [4, 1])
        #expect(next.items[0].minutes == 99)
        #expect(next.change.inserted == [0] && next.change.deleted == [1] && next.change.moves.isEmpty)
    }

    @Test("cancelling the iterating task stops the observation: the store has no listener left (a saveAndReset lists no IDs any more)")
    func cancellation() async throws {
        let test = try SessionStore(.sqlite)
        defer { test.cleanUp() }
        try await test.seed(2)
        let context = Context(store: test.store, name: "screen")
        let seen = AsyncStream<Int>.makeStream()
        let iteration = Task {
            for try await results in context.results(for: FetchRequest(entity: "Session")) { seen.continuation.yield(results.items.count) }
        }
        var counts = seen.stream.makeAsyncIterator()
        #expect(await counts.next() == 2)
        let insert = { @Sendable (id: Int) in
            try await context.perform { context in
                try context.insert(into: "Session", values: ["id": StoreValue(id), "user": "u"])
                return try context.saveAndReset()
            }
        }
        #expect(try await insert(3).didSave?.inserted.isEmpty == false, "observed: the save lists its IDs")
        #expect(await counts.next() == 3)
        iteration.cancel()
        _ = try? await iteration.value
        var listed = true
        for id in 4..<200 where listed {   // the observation's own task ends soon after
            listed = try await insert(id).didSave?.inserted.isEmpty == false
            if listed { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(!listed, "the observation still listens after its task was cancelled")
    }

    @Test("leaving the loop (the iterator dropped) stops the observation too")
    func leavingTheLoop() async throws {
        let test = try SessionStore(.sqlite)
        defer { test.cleanUp() }
        try await test.seed(2)
        let context = Context(store: test.store, name: "screen")
        for try await results in context.results(for: FetchRequest(entity: "Session")) {
            #expect(results.items.count == 2)
            break
        }
        var listed = true
        for id in 3..<200 where listed {
            listed = try await context.perform { context in
                try context.insert(into: "Session", values: ["id": StoreValue(id), "user": "u"])
                return try context.saveAndReset()
            }.didSave?.inserted.isEmpty == false
            if listed { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(!listed)
    }

    @Test("an unknown section or sort column throws from the iteration")
    @MainActor
    func unknownColumn() async throws {
        let test = try SessionStore(.sqlite)
        defer { test.cleanUp() }
        let main = MainContext(store: test.store)
        let unknownSection = main.results(for: FetchRequest(entity: "Session"), sectionedBy: "nope")
        await #expect(throws: ContextError.self) { for try await _ in unknownSection {} }
        var unknownSort = FetchRequest(entity: "Session")
        unknownSort.sortedBy = [.ascending("nope")]
        let sorted = main.results(for: unknownSort)
        await #expect(throws: ContextError.self) { for try await _ in sorted {} }
    }

    @Test("docs/library.md's live-results example runs as written")
    @MainActor
    func docsExample() async throws {
        let test = try SessionStore(.sqlite)
        defer { test.cleanUp() }
        try await test.seed(3)
        let main = MainContext(store: test.store)
        var shown: [[Int]] = []
        // The request and the loop's first four lines: docs/library.md, "Live results".
        var request = FetchRequest(entity: "Session", where: "status = 'open'")
        request.sortedBy = [.ascending("user"), .descending("minutes")]
        for try await results in main.results(for: request, sectionedBy: "user") {
            for section in results.sections { print(section.key, section.items.count) }
            let change = results.change
            print(change.inserted, change.deleted, change.updated, change.moves.map { ($0.from, $0.to) })
            shown.append(results.items.compactMap { $0["id"]?.int })
            if results.items.count == 4 { break }           // the example stops after one change
            try await Self.save(test.store) { try $0.insert(into: "Session", values: ["id": 4, "user": "user1"]) }
        }
        #expect(shown == [[3, 1, 2], [3, 1, 4, 2]])
    }
}
