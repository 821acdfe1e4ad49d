import Foundation
import Testing
@testable import BatchRunKit

/// Issue 34: the main context's async fetch and its merges work on the main actor in hops,
/// yielding it between: another main-actor task runs between the hops and sees the work part
/// done. (Behaviour, not timing: the stalls are measured in bench/library.)
@Suite("Main-actor hops")
struct MainActorHopTests {
    /// What a watcher task on the main actor saw while the main context worked.
    @MainActor final class Watch {
        var seen: [Int] = []
        var watching = true
    }

    @Test("an async fetch registers its objects fetchBatchSize at a time; a main-actor task runs between the hops")
    @MainActor
    func fetchInHops() async throws {
        let test = try TestStore(rows: 10_000)
        defer { test.cleanUp() }
        let main = MainContext(store: test.store)
        let watch = Watch()
        let watcher = Task { @MainActor in
            while watch.watching {
                watch.seen.append(main.registeredObjects.count)
                await Task.yield()
            }
        }
        var request = FetchRequest(entity: "Account")
        request.fetchBatchSize = 1_000
        let objects = try await main.fetch(request)
        watch.watching = false
        await watcher.value
        #expect(objects.count == 10_000)
        let between = Set(watch.seen.filter { $0 > 0 && $0 < 10_000 })
        #expect(between.count >= 5 && between.allSatisfy { $0 % 1_000 == 0 }, "registered counts seen between hops: \(between.sorted())")
    }

    @Test("a merge of 10,000 updated objects refreshes them 2,000 at a time; a main-actor task runs between the slices")
    @MainActor
    func mergeInHops() async throws {
        let test = try TestStore(rows: 10_000)
        defer { test.cleanUp() }
        let main = MainContext(store: test.store)
        let held = try await main.fetch(FetchRequest(entity: "Account"))
        let watch = Watch()
        let watcher = Task { @MainActor in
            while watch.watching {
                watch.seen.append(held.count(where: { $0.values[2] == .integer(20) }))
                await Task.yield()
            }
        }
        let writer = Context(store: test.store, name: "writer")
        try await writer.perform { context in
            var request = FetchRequest(entity: "Account")
            request.assigning = [("balance", "20")]
            _ = try context.fetch(request)
            try context.saveAndReset()
        }
        await main.catchUp()
        watch.watching = false
        await watcher.value
        #expect(held.allSatisfy { $0.values[2] == .integer(20) })
        let between = Set(watch.seen.filter { $0 > 0 && $0 < 10_000 })
        #expect(between.count >= 2, "refreshed counts seen between slices: \(between.sorted())")
    }
}
