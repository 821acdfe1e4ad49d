import Foundation
import Testing
@testable import BatchRunKit

/// Two record types of one entity: a context keeps one encoder at a time.
private struct AccountOwner: Record {
    static let entity = "Account"
    var id: Int
    var owner: String
}

private struct AccountBalance: Record {
    static let entity = "Account"
    var id: Int
    var owner: String
    var balance: Int
}

/// The encoder a context keeps and the container it keeps for the next record refer to each
/// other: the context must break that cycle when it lets the encoder go.
@Suite("Record encoder lifetime")
struct RecordEncoderLifetimeTests {
    @Test("an encoder replaced by another record type's is freed, and the last one with its context; their rows are saved")
    func encodersFreed() async throws {
        let test = try TestStore(rows: 0)
        defer { test.cleanUp() }
        weak var first: RecordEncoder?
        weak var second: RecordEncoder?
        do {
            let core = ContextCore(store: test.store, name: "lifetime", mergePolicy: .error)
            try core.insert(AccountOwner(id: 1, owner: "a"))
            try core.insert(AccountOwner(id: 2, owner: "b"))   // the kept container, again
            first = core.recordEncoder
            #expect(first != nil)
            try core.insert(AccountBalance(id: 3, owner: "c", balance: 5))
            second = core.recordEncoder
            #expect(first == nil)
            #expect(second != nil)
            #expect(try core.save().inserted == 3)
        }
        #expect(second == nil)
        let owners = try await Context(store: test.store, name: "check").perform { context in
            try context.fetch(FetchRequest(entity: "Account")).map { try $0["owner"].string! }
        }
        #expect(owners == ["a", "b", "c"])
    }
}
