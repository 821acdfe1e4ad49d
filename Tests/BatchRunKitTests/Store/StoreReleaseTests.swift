import Foundation
import Testing
@testable import BatchRunKit

/// `Store.release`: a store let go of once the other references to it are gone.
@Suite("Store release")
struct StoreReleaseTests {
    static let model = Model(entities: [
        Entity(name: "T", columns: [Column(name: "id", type: .integer, isPrimaryKey: true)], primaryKey: ["id"]),
    ])

    static func newFolder() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("batchrun-release-\(UUID().uuidString)").path
    }

    /// A store in `folder` with a row committed: its WAL is there.
    static func storeWithARow(in folder: String) throws -> Store {
        let store = try Store(path: folder + "/s.sqlite", model: Self.model)
        try store.backend.write(interruptedBy: nil) { db in try db.execute("INSERT INTO T (id) VALUES (1)") }
        return store
    }

    @Test("a reference another thread lets go of 0.2 s later is waited for: the last one closes the store, and no -wal is left")
    func waitsForAnotherThread() async throws {
        let folder = Self.newFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var store: Store? = try Self.storeWithARow(in: folder)
        Thread.detachNewThread { [held = store!] in
            Thread.sleep(forTimeInterval: 0.2)
            withExtendedLifetime(held) {}
        }
        #expect(await Store.release(&store, waitingUpTo: 30))
        #expect(store == nil)
        #expect(!FileManager.default.fileExists(atPath: folder + "/s.sqlite-wal"))
    }

    @Test("a reference held past the wait: false, and the store is left open (its -wal beside it)")
    func heldPastTheWait() async throws {
        let folder = Self.newFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var store: Store? = try Self.storeWithARow(in: folder)
        let held = store
        #expect(await !Store.release(&store, waitingUpTo: 0.1))
        #expect(store == nil)
        #expect(FileManager.default.fileExists(atPath: folder + "/s.sqlite-wal"))
        withExtendedLifetime(held) {}
    }
}
