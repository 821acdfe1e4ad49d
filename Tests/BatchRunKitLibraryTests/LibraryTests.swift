import BatchRunKit
import Foundation
import Synchronization
import TestSupport
import Testing

/// BatchRunKit as a library user sees it: only its public API, no `@testable`.
@Suite("The library, used as Core Data users expect")
struct LibraryTests {
    @Test("a merge refreshes the main context's objects in place: the same instance shows the background save", arguments: Backend.allCases)
    @MainActor
    func mergeRefreshesInPlace(backend: Backend) async throws {
        let test = try SessionStore(backend)
        defer { test.cleanUp() }
        try await test.seed(3)
        let main = MainContext(store: test.store)
        let held = try await main.fetch(FetchRequest(entity: "Session", where: "id = 2"))[0]
        #expect(try held["minutes"] == .real(10))

        let worker = BatchOperation<Void>(name: "worker", store: test.store) { _, context in
            for session in try context.fetch(FetchRequest(entity: "Session")) { try session.set("minutes", to: 42.5) }
            try context.save()
        }
        _ = await Scheduler(operations: [worker], maxConcurrent: 1, mainContext: main).run()
        // Scheduler.run() returns with the main context caught up: the object the UI holds shows it.
        #expect(try held["minutes"] == .real(42.5))
        let again = try await main.fetch(FetchRequest(entity: "Session", where: "id = 2"))[0]
        #expect(again === held)
    }

    @Test("a save of 12,000 rows (more than one merge slice) refreshes every held object in place; deleted ones go, changed ones keep their changes", arguments: Backend.allCases)
    @MainActor
    func largeSaveMergedInSlices(backend: Backend) async throws {
        let test = try SessionStore(backend)
        defer { test.cleanUp() }
        try await test.seed(12_000)
        let main = MainContext(store: test.store)
        let held = try await main.fetch(FetchRequest(entity: "Session"))
        try held[6_000].set("minutes", to: 1.5)   // an unsaved change on the main context
        let worker = BatchOperation<Void>(name: "worker", store: test.store) { _, context in
            for session in try context.fetch(FetchRequest(entity: "Session")) {
                if try session["id"].int! % 1_000 == 0 { context.delete(session) } else { try session.set("minutes", to: 20) }
            }
            try context.save()
        }
        _ = await Scheduler(operations: [worker], maxConcurrent: 1, mainContext: main).run()
        let stale = try held.enumerated().filter { offset, object in
            try offset != 6_000 && (offset + 1) % 1_000 != 0 && object["minutes"] != .real(20)
        }
        #expect(stale.isEmpty, "\(stale.count) held objects do not show the save")
        let kept = try held[6_000]["minutes"]
        #expect(kept == .real(1.5), "\(kept)")
        #expect(held[6_000].hasChanges)
        #expect(main.registeredObjects.count == 12_000 - 12)   // the 12 deleted ones dropped
    }

    @Test("completion blocks run on the main actor after the main context merged the operation's saves", arguments: Backend.allCases)
    @MainActor
    func completionSeesMergedSaves(backend: Backend) async throws {
        let test = try SessionStore(backend)
        defer { test.cleanUp() }
        try await test.seed(2)
        let main = MainContext(store: test.store)
        let held = try await main.fetch(FetchRequest(entity: "Session", where: "id = 1"))[0]
        let insert = BatchOperation<Void>(name: "insert", store: test.store) { _, context in
            try context.insert(into: "Session", values: ["id": 3, "user": "cy"])
            try context.perform { context in
                for session in try context.fetch(FetchRequest(entity: "Session", where: "id = 1")) { try session.set("status", to: "closed") }
            }
            try context.save()
        }
        var seen: (status: StoreValue, count: Int)?
        insert.completionBlock = { _ in
            MainActor.assertIsolated()
            seen = (try? held["status"]) .map { ($0, (try? main.count(FetchRequest(entity: "Session"))) ?? -1) }
        }
        _ = await Scheduler(operations: [insert], maxConcurrent: 1, mainContext: main).run()
        #expect(seen?.status == "closed")
        #expect(seen?.count == 3)
    }

    @Test("after interrupt(), the context's later statements throw instead of running; other contexts go on", arguments: Backend.allCases)
    func interruptStopsLaterStatements(backend: Backend) async throws {
        let test = try SessionStore(backend)
        defer { test.cleanUp() }
        try await test.seed(3)
        let context = Context(store: test.store, name: "cancelled")
        try await context.perform { context in
            #expect(try context.fetch(FetchRequest(entity: "Session")).count == 3)
            context.interrupt()   // between statements: nothing runs now
            let error = #expect(throws: (any Error).self) { try context.fetch(FetchRequest(entity: "Session")) }
            #expect("\(error.map { "\($0)" } ?? "")".contains("interrupt"))
            try context.insert(into: "Session", values: ["id": 4, "user": "dee"])
            #expect(throws: (any Error).self) { try context.save() }
        }
        let others = try await Context(store: test.store, name: "reader").perform { try $0.fetch(FetchRequest(entity: "Session")).count }
        #expect(others == 3)
    }

    @Test("an unknown column is a thrown error on write and on read, and changes nothing", arguments: Backend.allCases)
    func unknownColumn(backend: Backend) async throws {
        let test = try SessionStore(backend)
        defer { test.cleanUp() }
        try await test.seed(1)
        let context = Context(store: test.store, name: "typo")
        let outcome = try await context.perform { context -> (write: String, read: String, changed: Bool) in
            let session = try context.fetch(FetchRequest(entity: "Session"))[0]
            var write = "", read = ""
            do { try session.set("minutez", to: 1) } catch { write = "\(error)" }
            do { _ = try session["usr"] } catch { read = "\(error)" }
            return (write, read, context.hasChanges)
        }
        #expect(outcome.write == "entity Session has no column minutez")
        #expect(outcome.read == "entity Session has no column usr")
        #expect(!outcome.changed)
        await #expect(throws: (any Error).self) {
            try await context.perform { context in _ = try context.insert(into: "Session", values: ["id": 9, "nmae": "x"]) }
        }
    }

    @Test("counts, aggregates and groups come back as rows, not objects", arguments: Backend.allCases)
    @MainActor
    func aggregates(backend: Backend) async throws {
        let test = try SessionStore(backend)
        defer { test.cleanUp() }
        try await test.seed(9, minutes: 6)
        let main = MainContext(store: test.store)
        #expect(try main.count(FetchRequest(entity: "Session", where: #""user" = 'user1'"#)) == 3)   // quoted: a keyword on PostgreSQL
        var request = RowRequest(entity: "Session", select: ["user": "user", "sessions": "count(*)", "total": "sum(minutes)"])
        request.groupBy = ["user"]
        request.orderBy = [.descending("user")]
        let rows = try await main.fetch(request)
        #expect(rows.map { $0["user"]?.string } == ["user2", "user1", "user0"])
        #expect(rows.map { $0["sessions"]?.int } == [3, 3, 3])
        #expect(rows.map { $0["total"]?.double } == [18, 18, 18])
        #expect(main.registeredObjects.isEmpty)
    }

    @Test("typed results reach the completion block on the main actor; an operation runs on its own", arguments: Backend.allCases)
    @MainActor
    func typedResults(backend: Backend) async throws {
        let test = try SessionStore(backend)
        defer { test.cleanUp() }
        try await test.seed(4)
        let count = BatchOperation(name: "count", store: test.store) { _, context -> Int in
            try context.count(FetchRequest(entity: "Session"))
        }
        var delivered: Int?
        count.completionBlock = { result in
            MainActor.assertIsolated()
            delivered = result.value
        }
        let result = await count.run()
        #expect(result.status == .ok && result.value == 4)
        #expect(delivered == 4)

        let failing = BatchOperation<Int>(name: "failing", store: test.store) { _, context in
            try context.count(FetchRequest(entity: "Nope"))
        }
        let failed = await failing.run()
        #expect(failed.status == .failed && failed.value == nil)
        #expect(failed.failure.map { "\($0)" } == "no entity named Nope")

        let started = BatchOperation<Int>(name: "started") { _ in 7 }
        let done = Mutex<Int?>(nil)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            started.completionBlock = { result in
                done.withLock { $0 = result.value }
                continuation.resume()
            }
            started.start()
        }
        #expect(done.withLock { $0 } == 7)
    }

    @Test("the main context inserts and deletes", arguments: Backend.allCases)
    @MainActor
    func mainContextWrites(backend: Backend) async throws {
        let test = try SessionStore(backend)
        defer { test.cleanUp() }
        try await test.seed(2)
        let main = MainContext(store: test.store)
        let added = try main.insert(into: "Session", values: ["id": 10, "user": "dee"])
        let gone = try await main.fetch(FetchRequest(entity: "Session", where: "id = 1"))[0]
        main.delete(gone)
        let result = try main.save()
        #expect(result.inserted == 1 && result.deleted == 1)
        #expect(try added["status"] == "open")   // the default, read back at save
        #expect(try await main.fetch(FetchRequest(entity: "Session")).compactMap { try $0["id"].int } == [2, 10])
    }

    @Test("values: typed initialisers and accessors; dates stored as ISO 8601 text", arguments: Backend.allCases)
    func values(backend: Backend) async throws {
        let date = Date(timeIntervalSince1970: 1_769_847_300.25)   // 2026-01-31T08:15:00.250Z
        #expect(StoreValue(date) == .text("2026-01-31T08:15:00.250Z"))
        #expect(StoreValue(date).date == date)
        #expect(StoreValue.text("2026-01-31").date == Date(timeIntervalSince1970: 1_769_817_600))
        #expect(StoreValue.text("2026-01-31 09:15:00+01:00").date == Date(timeIntervalSince1970: 1_769_847_300))
        #expect(StoreValue(42).int == 42 && StoreValue(2.5).double == 2.5 && StoreValue("a").string == "a")
        #expect(StoreValue(true) == .integer(1) && StoreValue.integer(0).bool == false)
        #expect(StoreValue(Data([1, 2])).data == Data([1, 2]))
        #expect(StoreValue(Optional<Int>.none) == .null && StoreValue.text("x").int == nil)

        let test = try SessionStore(backend)
        defer { test.cleanUp() }
        let context = Context(store: test.store, name: "dates")
        let stored = try await context.perform { context -> StoreValue in
            try context.insert(into: "Session", values: ["id": 1, "user": "ann", "started_at": StoreValue(date)])
            try context.save()
            context.reset()
            return try context.fetch(FetchRequest(entity: "Session"))[0]["started_at"]
        }
        #expect(stored.date == date)
    }
}
