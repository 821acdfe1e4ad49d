import Testing
@testable import BatchRunKit
@_spi(BatchRunPackage) import BatchRunStore

/// The change log's record of who last wrote each key, compact for ranges and for scattered keys.
@Suite("Key owners")
struct KeyOwnersTests {
    @Test("ranges, scattered keys, chunks cut and filled, several jobs, negative keys: the same owners as one entry a key")
    func matchesOneEntryAKey() {
        var generator = SystemRandomNumberGenerator()
        for round in 0..<40 {
            var owners = KeyOwners()
            var expected: [Int64: String] = [:]
            let span: Int64 = round % 2 == 0 ? 700 : 5_000
            for save in 0..<30 {
                let job = ["load", "fix", "touch", "late"][Int.random(in: 0..<4, using: &generator)]
                var keys = KeySet()
                var key = Int64.random(in: -200...span, using: &generator)
                let scattered = Bool.random(using: &generator)
                for _ in 0..<Int.random(in: 1...400, using: &generator) {
                    keys.insert(integer: key)
                    expected[key] = job
                    key += scattered ? Int64.random(in: 1...5, using: &generator) : 1
                }
                owners.assign(keys, to: job)
                if save % 10 == 9 {
                    let wrong = (-260...(span + 2_100)).filter { probe in
                        owners.owner(of: ObjectID(entity: "Reading", single: .integer(probe))) != expected[probe]
                    }
                    #expect(wrong.isEmpty, "round \(round), save \(save), keys \(wrong.prefix(10))")
                }
            }
        }
    }

    @Test("a job that writes every other key of a large table keeps a chunk a 64 keys, and ranges once it writes the rest")
    func scatteredKeysStaySmall() {
        var owners = KeyOwners()
        var odd = KeySet(), even = KeySet()
        for key in stride(from: Int64(1), through: 640_000, by: 2) { odd.insert(integer: key) }
        for key in stride(from: Int64(2), through: 640_000, by: 2) { even.insert(integer: key) }
        owners.assign(odd, to: "touch")
        #expect(owners.rangeCount <= 10_001)
        owners.assign(even, to: "touch")
        #expect(owners.rangeCount == 3)   // chunk 0 without key 0, chunks 1-9,999 whole, chunk 10,000 with key 640,000 alone
        #expect(owners.owner(of: ObjectID(entity: "Account", single: .integer(77))) == "touch")
        #expect(owners.owner(of: ObjectID(entity: "Account", single: .integer(640_001))) == nil)
    }
}
