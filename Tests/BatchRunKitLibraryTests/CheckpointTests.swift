import BatchRunKit
import Foundation
import TestSupport
import Testing

/// `Context.save(checkpoint:)` and `Context.checkpoint` as docs/library.md shows them: a batch
/// loop stopped midway continues after its last committed batch, exactly once.
@Suite("Checkpoints from the library")
struct CheckpointTests {
    struct Stopped: Error {}

    /// The loop of docs/library.md ("Checkpoints"), stopped by a thrown error after
    /// `stopAfter` committed batches (nil: it runs to the end). Returns the batches it saved.
    @discardableResult
    static func addBonus(store: Store, stopAfter: Int? = nil) async throws -> Int {
        let context = Context(store: store, name: "bonus-2026-11")
        return try await context.perform { context in
            var request = FetchRequest(entity: "Session", limit: 1_000)
            if let last = try context.checkpoint { request.after = ObjectID(entity: "Session", key: [last]) }
            var saved = 0
            while true {
                let batch = try context.fetch(request)
                guard let last = batch.last?.objectID else { break }
                for session in batch { try session.set("minutes", to: .real((session["minutes"].double ?? 0) + 5)) }
                try context.save(checkpoint: last.key[0])
                saved += 1
                if saved == stopAfter { throw Stopped() }
                context.reset()
                request.after = last
            }
            return saved
        }
    }

    /// Every session's minutes, in key order.
    static func minutes(_ store: Store) async throws -> [Double] {
        try await Context(store: store, name: "reader").perform { context in
            try context.fetch(FetchRequest(entity: "Session")).map { try $0["minutes"].double ?? -1 }
        }
    }

    @Test("a batch loop stopped midway and started again changes every row exactly once; once done it finds nothing left", arguments: Backend.allCases)
    func resumesExactlyOnce(backend: Backend) async throws {
        let sessions = try SessionStore(backend)
        defer { sessions.cleanUp() }
        try await sessions.seed(2_500, minutes: 10)
        await #expect(throws: Stopped.self) { try await Self.addBonus(store: sessions.store, stopAfter: 2) }
        let halfway = try await Self.minutes(sessions.store)
        #expect(halfway.prefix(2_000).allSatisfy { $0 == 15 } && halfway.suffix(500).allSatisfy { $0 == 10 })

        #expect(try await Self.addBonus(store: sessions.store) == 1)   // the last 500 rows
        #expect(try await Self.minutes(sessions.store).allSatisfy { $0 == 15 })
        #expect(try await Self.addBonus(store: sessions.store) == 0)
        #expect(try await Self.minutes(sessions.store).allSatisfy { $0 == 15 })
        let checkpoint = try await Context(store: sessions.store, name: "bonus-2026-11").perform { try $0.checkpoint }
        #expect(checkpoint == StoreValue(2_500))
    }

    @Test("a save whose transaction fails keeps neither its changes nor its checkpoint; nil clears the checkpoint", arguments: Backend.allCases)
    func failedSaveKeepsNeither(backend: Backend) async throws {
        let sessions = try SessionStore(backend)
        defer { sessions.cleanUp() }
        try await sessions.seed(3)
        let context = Context(store: sessions.store, name: "copy")
        try await context.perform { context in
            #expect(try context.checkpoint == nil)
            let rows = try context.fetch(FetchRequest(entity: "Session"))
            try rows[0].set("minutes", to: 1)
            try context.save(checkpoint: StoreValue(1))
            try rows[1].set("minutes", to: 2)
            try rows[2].set("user", to: .null)   // user is NOT NULL: the save fails
            #expect(throws: (any Error).self) { try context.save(checkpoint: StoreValue(3)) }
            #expect(try context.checkpoint == StoreValue(1))
            context.rollback()
            try context.save(checkpoint: nil)
            #expect(try context.checkpoint == nil)
        }
        #expect(try await Self.minutes(sessions.store) == [1, 10, 10])
    }
}
