import Testing
@_spi(BatchRunPackage) import BatchRunStore

/// A save's key set, compact for integer keys: keys recorded a chunk at once give the same set
/// as keys recorded one at a time.
@Suite("Key sets")
struct KeySetTests {
    @Test("a chunk's keys at once (runs, repeats, gaps, descending, negative) make the same ranges as one key at a time")
    func chunkAtOnceMatchesOneAtATime() {
        var generator = SystemRandomNumberGenerator()
        for round in 0..<200 {
            var atOnce = KeySet(), oneByOne = KeySet()
            var key = Int64.random(in: -50...50, using: &generator)
            for _ in 0..<Int.random(in: 1...6, using: &generator) {
                var chunk: [Int64] = []
                for _ in 0..<Int.random(in: 0...60, using: &generator) {
                    chunk.append(key)
                    switch Int.random(in: 0..<10, using: &generator) {
                    case 0: key += Int64.random(in: 2...9, using: &generator)    // a gap
                    case 1: key -= Int64.random(in: 1...9, using: &generator)    // back, into a range or before it
                    case 2: break                                                // the same key again
                    default: key += 1
                    }
                }
                atOnce.insert(integers: chunk)
                for value in chunk { oneByOne.insert(integer: value) }
                #expect(atOnce.ranges == oneByOne.ranges, "round \(round), chunk \(chunk)")
            }
        }
    }

    @Test("a chunk of consecutive keys after the last range extends it: one range for the whole import")
    func consecutiveChunksStayOneRange() {
        var keys = KeySet()
        for chunk in 0..<100 {
            let first = Int64(chunk * 1_000 + 1)
            keys.insert(integers: first...(first + 999))
        }
        #expect(keys.ranges == [1...100_000])
    }
}
