import BatchRunKit
import Foundation
import TestSupport
import Testing

/// Issue 34: a context holds the objects someone holds or that have unsaved changes, as Core
/// Data does (weakly), so a plain `save()` in a long loop looks at its changes, not at every
/// object it ever saved or read, and memory does not grow with the loop.
@Suite("Registered objects")
struct RegisteredObjectsTests {
    @Test("plain save() every 5,000 inserts forgets the saved objects nobody holds; the one held stays registered, read back with its defaults", arguments: Backend.allCases)
    func plainSaveForgetsWhatNobodyHolds(backend: Backend) async throws {
        let test = try SessionStore(backend)
        defer { test.cleanUp() }
        let context = Context(store: test.store, name: "import")
        let seen = try await context.perform { context -> (registered: Int, same: Bool, status: StoreValue, stored: Int) in
            let held = try context.insert(into: "Session", values: ["id": 0, "user": "kept"])
            for first in stride(from: 1, through: 20_000, by: 5_000) {
                for id in first..<first + 5_000 { try context.insert(into: "Session", values: ["id": StoreValue(id), "user": "u"]) }
                try context.save()
            }
            let again = try context.existingObject(with: ObjectID(entity: "Session", key: [0]))
            return (context.registeredObjects.count, again === held, try held["status"],
                    try context.count(FetchRequest(entity: "Session")))
        }
        #expect(seen.registered == 1, "only the held object stays registered")
        #expect(seen.same, "the held object is the registered one")
        #expect(seen.status == "open", "a held insert takes its row as stored, defaults included")
        #expect(seen.stored == 20_001)
    }

    @Test("an object changed and let go is held until saved, then forgotten; rollback lets it go too", arguments: Backend.allCases)
    func changedObjectsAreHeldUntilSaved(backend: Backend) async throws {
        let test = try SessionStore(backend)
        defer { test.cleanUp() }
        try await test.seed(100)
        let context = Context(store: test.store, name: "edit")
        let seen = try await context.perform { context -> (pending: Int, updated: Int, after: Int, rolledBack: Int, changes: Bool) in
            for session in try context.fetch(FetchRequest(entity: "Session")) where try session["id"].int! <= 10 {
                try session.set("minutes", to: 99.5)
            }
            let pending = context.registeredObjects.count   // the 10 changed ones; the 90 read only are gone
            let saved = try context.save()
            let after = context.registeredObjects.count
            for session in try context.fetch(FetchRequest(entity: "Session", where: "id > 90")) { context.delete(session) }
            context.rollback()
            return (pending, saved.updated, after, context.registeredObjects.count, context.hasChanges)
        }
        #expect(seen.pending == 10 && seen.updated == 10 && seen.after == 0)
        #expect(seen.rolledBack == 0 && !seen.changes)
        let counts = try await Context(store: test.store, name: "check").perform { context in
            [try context.count(FetchRequest(entity: "Session", where: "minutes = 99.5")), try context.count(FetchRequest(entity: "Session"))]
        }
        #expect(counts == [10, 100], "10 saved; the rolled-back deletes deleted nothing")
    }

    @Test("retainsRegisteredObjects keeps every object read until reset, as Core Data's does", arguments: Backend.allCases)
    func retainsRegisteredObjects(backend: Backend) async throws {
        let test = try SessionStore(backend)
        defer { test.cleanUp() }
        try await test.seed(100)
        let context = Context(store: test.store, name: "reader")
        let counts = try await context.perform { context -> [Int] in
            _ = try context.fetch(FetchRequest(entity: "Session"))
            let weakly = context.registeredObjects.count
            context.retainsRegisteredObjects = true
            _ = try context.fetch(FetchRequest(entity: "Session"))
            let retained = context.registeredObjects.count
            context.reset()
            return [weakly, retained, context.registeredObjects.count]
        }
        #expect(counts == [0, 100, 0])
    }

    @Test("a main context that retains its objects finds the same instance after the caller let it go")
    @MainActor
    func mainContextRetains() async throws {
        let test = try SessionStore(.sqlite)
        defer { test.cleanUp() }
        try await test.seed(3)
        let main = MainContext(store: test.store)
        #expect(!main.retainsRegisteredObjects)
        main.retainsRegisteredObjects = true
        let first = ObjectIdentifier(try await main.fetch(FetchRequest(entity: "Session", where: "id = 2"))[0])
        let again = try #require(try main.existingObject(with: ObjectID(entity: "Session", key: [2])))
        #expect(ObjectIdentifier(again) == first)
    }
}
