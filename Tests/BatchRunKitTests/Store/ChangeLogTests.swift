import Testing
@testable import BatchRunKit
@_spi(BatchRunPackage) import BatchRunStore

/// Who changed a row in this run, as conflicts name it.
@Suite("Change log")
struct ChangeLogTests {
    @Test("the writer of each row of a batch: open saves, settled ones, the latest of two, deletes, other entities, text keys")
    func lastWritersMatchOneByOne() {
        let log = ChangeLog()
        func keys(_ values: [Int64], text: [String] = []) -> KeySet {
            var set = KeySet()
            for value in values { set.insert(integer: value) }
            for value in text { set.insert(ObjectID(entity: "Reading", single: .text(value))) }
            return set
        }
        // Saves 1-2 settle into the owners (no context is open); a context reads at 2 and stays
        // open, so saves 3-5 stay recent.
        log.record(sequence: 1, job: "load", changes: [(entity: "Reading", keys: keys(Array(1...100), text: ["a", "b"]), isDelete: false)])
        log.record(sequence: 2, job: "fix", changes: [(entity: "Reading", keys: keys(Array(40...60)), isDelete: false),
                                                      (entity: "Sensor", keys: keys([7]), isDelete: false)])
        log.open(read: 2)
        log.record(sequence: 3, job: "trim", changes: [(entity: "Reading", keys: keys([50, 90], text: ["b"]), isDelete: true)])
        log.record(sequence: 4, job: "late", changes: [(entity: "Reading", keys: keys([55, 150, 160]), isDelete: false)])
        log.record(sequence: 5, job: "other", changes: [(entity: "Sensor", keys: keys([1, 2, 3]), isDelete: false)])
        log.record(sequence: 6, job: "later", changes: [(entity: "Reading", keys: keys([150]), isDelete: false)])
        log.record(sequence: 7, job: "gone", changes: [(entity: "Reading", keys: keys([160]), isDelete: true)])
        #expect(log.size.recent == 5)
        let keys: [Int64] = [1, 2, 7, 39, 40, 50, 55, 60, 61, 90, 100, 101, 150, 151, 160]
        let ids = keys.map { ObjectID(entity: "Reading", single: .integer($0)) } + ["a", "b", "c"].map { ObjectID(entity: "Reading", single: .text($0)) }
        // What each is: settled owners, a recent insert over them, the latest of two recent
        // inserts, a delete (recent or settled) that leaves the insert before it, another
        // entity's keys not mixed in, keys no one wrote.
        let expected: [String?] = ["load", "load", "load", "load", "fix", "fix", "late", "fix", "load", "load", "load", nil, "later", nil,
                                   "late", "load", "load", nil]
        #expect(log.lastWriters(of: ids, entity: "Reading") == expected)
        #expect(ids.map { log.lastWriter(of: $0) } == expected)
        #expect(log.lastWriters(of: [ObjectID(entity: "Sensor", single: .integer(2))], entity: "Sensor") == ["other"])
        // Once the context closes, the recent saves settle: the same answers from the owners.
        log.close(read: 2)
        #expect(log.size.recent == 0)
        #expect(log.lastWriters(of: ids, entity: "Reading") == expected)
    }
}
