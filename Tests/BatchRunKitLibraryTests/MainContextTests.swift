import BatchRunKit
import Foundation
import TestSupport
import Testing

/// The main context as a screen uses it: its merge policy, its fetches, its errors.
@Suite("The main context")
struct MainContextTests {
    /// Session 1's columns as a fresh context reads them after the main context's save.
    struct Outcome: Equatable, CustomStringConvertible {
        var minutes: Double?
        var user: String?
        var status: String?
        var description: String { "minutes \(minutes ?? .nan), user \(user ?? "-"), status \(status ?? "-")" }
    }

    /// Each policy as the merge-policy table of docs/library.md says, for an unsaved edit on the
    /// main context (minutes 99, user zed) meeting a background save of the same row (minutes 50,
    /// status closed) that the main context merged meanwhile.
    static let expected: [(MergePolicy, Outcome?)] = [
        (.error, nil),
        (.storeTrump, Outcome(minutes: 50, user: "zed", status: "closed")),
        (.objectTrump, Outcome(minutes: 99, user: "zed", status: "closed")),
        (.overwrite, Outcome(minutes: 99, user: "zed", status: "open")),
        (.rollback, Outcome(minutes: 50, user: "user1", status: "closed")),
        (.recompute, Outcome(minutes: 99, user: "zed", status: "closed")),
    ]

    @Test("the main context's merge policy resolves an unsaved main edit against a background save of the same row, for each of the six policies", arguments: Backend.allCases)
    @MainActor
    func mergePolicies(backend: Backend) async throws {
        for (policy, expected) in Self.expected {
            let test = try SessionStore(backend)
            defer { test.cleanUp() }
            try await test.seed(2)
            let main = MainContext(store: test.store)
            #expect(main.mergePolicy == .error)
            main.mergePolicy = policy
            let held = try await main.fetch(FetchRequest(entity: "Session", where: "id = 1"))[0]
            try held.set("minutes", to: 99)
            try held.set("user", to: "zed")

            let background = Context(store: test.store, name: "background")
            try await background.perform { context in
                let session = try context.fetch(FetchRequest(entity: "Session", where: "id = 1"))[0]
                try session.set("minutes", to: 50)
                try session.set("status", to: "closed")
                try context.save()
            }
            await main.catchUp()
            #expect(held.hasChanges, "\(policy): the merge kept the unsaved edit")

            let outcome: SaveResult
            do {
                outcome = try main.save()
            } catch let error as MergeConflictError {
                #expect(expected == nil, "\(policy) threw \(error)")
                #expect(error.conflict.changedBy == "background")
                continue
            }
            #expect(expected != nil, "\(policy) did not throw")
            #expect(outcome.conflicts.count == 1, "\(policy)")
            #expect(outcome.conflicts.first?.policy == policy)
            let reader = Context(store: test.store, name: "reader")
            let stored = try await reader.perform { context in
                let row = try context.fetch(FetchRequest(entity: "Session", where: "id = 1"))[0]
                return Outcome(minutes: try row["minutes"].double, user: try row["user"].string, status: try row["status"].string)
            }
            #expect(stored == expected, "\(policy): \(stored)")
        }
    }

    @Test("fetch (async, off the main actor) and fetchNow (sync, on it) are named apart and give the same registered objects", arguments: Backend.allCases)
    @MainActor
    func fetchNamedApart(backend: Backend) async throws {
        let test = try SessionStore(backend)
        defer { test.cleanUp() }
        try await test.seed(5)
        let main = MainContext(store: test.store)
        // In an async function both compile: the sync one without await, the async one with it.
        let now = try main.fetchNow(FetchRequest(entity: "Session", where: "id <= 3"))
        let later = try await main.fetch(FetchRequest(entity: "Session", where: "id <= 3"))
        #expect(now.count == 3)
        #expect(zip(now, later).allSatisfy { $0 === $1 })
    }

    @Test("a :param the request does not give throws StoreError.missingParameter naming it, on every read path; nothing is bound to NULL", arguments: Backend.allCases)
    @MainActor
    func missingParameterThrows(backend: Backend) async throws {
        let test = try SessionStore(backend)
        defer { test.cleanUp() }
        try await test.seed(3)
        let request = FetchRequest(entity: "Session", where: "id = :wanted OR \"user\" = :who", params: ["who": "user1"])
        func isMissingWanted(_ error: (any Error)?) -> Bool {
            guard case .missingParameter(let name) = error as? StoreError else { return false }
            return name == "wanted" && "\(error!)".contains(":wanted")
        }
        let main = MainContext(store: test.store)
        #expect(isMissingWanted(await #expect(throws: StoreError.self) { try await main.fetch(request).count }))
        #expect(isMissingWanted(#expect(throws: StoreError.self) { try main.fetchNow(request).count }))
        #expect(isMissingWanted(#expect(throws: StoreError.self) { try main.count(request) }))
        let rows = RowRequest(entity: "Session", select: ["n": "count(*)"], where: "minutes > :least")
        let rowError = await #expect(throws: StoreError.self) { try await main.fetch(rows) }
        #expect(rowError.map { "\($0)" }?.contains(":least") == true)
        let context = Context(store: test.store, name: "private")
        let privateError = await #expect(throws: StoreError.self) { try await context.perform { try $0.fetch(request).count } }
        #expect(isMissingWanted(privateError))
        // With the value given, the same request reads.
        var given = request
        given = FetchRequest(entity: "Session", where: "id = :wanted OR \"user\" = :who", params: ["who": "user1", "wanted": 3])
        #expect(try main.fetchNow(given).count == 2)
    }

    @Test("a database's refusal surfaces as StoreError.database with the database's own message, on reads and saves, from both contexts", arguments: Backend.allCases)
    @MainActor
    func databaseErrorsAreTheLibrarys(backend: Backend) async throws {
        let test = try SessionStore(backend)
        defer { test.cleanUp() }
        try await test.seed(1)
        func message(_ error: (any Error)?) -> String? {
            guard case .database(let failure) = error as? StoreError else { return nil }
            return failure.message
        }
        let typo = FetchRequest(entity: "Session", where: "no_such_column = 1")
        let main = MainContext(store: test.store)
        let read = await #expect(throws: StoreError.self) { try await main.fetch(typo).count }
        #expect(message(read)?.contains("no_such_column") == true, "\(String(describing: read))")
        #expect(message(#expect(throws: StoreError.self) { try main.fetchNow(typo).count })?.contains("no_such_column") == true)
        let context = Context(store: test.store, name: "private")
        let privateRead = await #expect(throws: StoreError.self) { try await context.perform { try $0.count(typo) } }
        #expect(message(privateRead)?.contains("no_such_column") == true)
        // A NOT NULL column left empty: the database refuses the save.
        try main.insert(into: "Session", values: ["id": 7])
        let saved = #expect(throws: StoreError.self) { try main.save() }
        #expect(message(saved)?.lowercased().contains("null") == true, "\(String(describing: saved))")
    }
}
