import Testing
@testable import BatchRunKit

/// Who changed a row in this run, as conflicts name it.
@Suite("Change log")
struct ChangeLogTests {
    @Test("a batch's writers, looked up together, are each row's writer looked up alone: open saves, settled ones, deletes, other entities, text keys")
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
        log.record(sequence: 4, job: "late", changes: [(entity: "Reading", keys: keys([55, 150]), isDelete: false)])
        log.record(sequence: 5, job: "other", changes: [(entity: "Sensor", keys: keys([1, 2, 3]), isDelete: false)])
        #expect(log.size.recent == 3)
        let ids = ([1, 2, 7, 39, 40, 50, 55, 60, 61, 90, 100, 101, 150, 151] as [Int64]).map { ObjectID(entity: "Reading", single: .integer($0)) }
            + ["a", "b", "c"].map { ObjectID(entity: "Reading", single: .text($0)) }
        let together = log.lastWriters(of: ids, entity: "Reading")
        #expect(together == ids.map { log.lastWriter(of: $0) })
        // What each is: settled owners, the recent insert over them, a delete that leaves the
        // settled owner, another entity's keys not mixed in, keys no one wrote.
        let expected: [String?] = ["load", "load", "load", "load", "fix", "fix", "late", "fix", "load", "load", "load", nil, "late", nil,
                                   "load", "load", nil]
        #expect(together == expected)
        #expect(log.lastWriters(of: [ObjectID(entity: "Sensor", single: .integer(2))], entity: "Sensor") == ["other"])
    }
}
