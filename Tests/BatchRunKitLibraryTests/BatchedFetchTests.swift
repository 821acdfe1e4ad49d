import BatchRunKit
import Foundation
import TestSupport
import Testing

/// Issue 34: `fetchBatchSize`, the objects an async fetch registers on the main actor per hop.
@Suite("Batched fetches")
struct BatchedFetchTests {
    @Test("fetchBatchSize gives the same objects in the same order; a save merged while the fetch registers them is not undone", arguments: Backend.allCases)
    @MainActor
    func batchedFetch(backend: Backend) async throws {
        let test = try SessionStore(backend)
        defer { test.cleanUp() }
        try await test.seed(6_000)
        let main = MainContext(store: test.store)
        var request = FetchRequest(entity: "Session")
        request.sortedBy = [.descending("id")]
        request.fetchBatchSize = 500
        let writer = Context(store: test.store, name: "writer")
        let save = Task {
            try await writer.perform { context in
                var everyRow = FetchRequest(entity: "Session")
                everyRow.assigning = [("minutes", "minutes + 1")]
                _ = try context.fetch(everyRow)
                try context.saveAndReset()
            }
        }
        let objects = try await main.fetch(request)
        try await save.value
        await main.catchUp()
        #expect(try objects.map { try $0["id"].int! } == Array((1...6_000).reversed()))
        let stale = try objects.filter { try $0["minutes"] != .real(11) }.count
        #expect(stale == 0, "\(stale) objects do not show the save")
    }
}
