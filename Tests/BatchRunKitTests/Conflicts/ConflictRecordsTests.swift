import Foundation
import Testing
@testable import BatchRunKit
@_spi(BatchRunPackage) import BatchRunStore

/// The compact conflict records hold exactly the records put in, whichever way they were put in.
@Suite("Conflict records")
struct ConflictRecordsTests {
    static let records = [
        MergeConflictRecord(job: "load", entity: "Reading", key: ["id": .integer(41)], kind: .constraint, policy: .objectTrump,
                            outcome: .keptOurs, changedBy: "outside this run", properties: [
                                .init(name: "value", original: .null, store: .real(-0.0), ours: .real(0.1), resolved: .real(.infinity)),
                                .init(name: "note", original: .text("é \" \n ✓"), store: .text(""), ours: .integer(Int64.min),
                                      resolved: .text("x")),
                            ]),
        MergeConflictRecord(job: "j2", entity: "Pair", key: ["b": .text("x"), "a": .integer(1)], kind: .optimistic,
                            policy: .storeTrump, outcome: .keptStore, changedBy: "load", properties: []),
        MergeConflictRecord(job: "load", entity: "Reading", key: ["id": .integer(7)], kind: .deleted, policy: .rollback,
                            outcome: .failed, changedBy: "j2", properties: [
                                .init(name: "value", original: .integer(3), store: .null, ours: .integer(4), resolved: .null),
                            ]),
    ]

    @Test("records put in come out the same, in order; equality and hashing are the records'")
    func roundTrip() {
        let records = ConflictRecords(Self.records)
        #expect(records.count == 3 && Array(records) == Self.records)
        #expect(records == Self.records)
        #expect(records.summary(at: 1).job == "j2" && records.outcome(at: 2) == .failed)
        var again = ConflictRecords()
        for record in Self.records.reversed() { again.append(record) }
        #expect(again != records)
        #expect(ConflictRecords(again.reversed()) == records)
        #expect(ConflictRecords(again.reversed()).hashValue == records.hashValue)
    }

    @Test("appending another's records renames its names and moves its text")
    func appendContents() {
        var first = ConflictRecords([Self.records[1]])
        let second = ConflictRecords([Self.records[0], Self.records[2]])
        first.append(contentsOf: second)
        #expect(Array(first) == [Self.records[1], Self.records[0], Self.records[2]])
        var empty = ConflictRecords()
        empty.append(contentsOf: second)
        #expect(empty == second)
    }

    @Test("records from a point on are removed with their values; the tail is put in row order, stably")
    func removeAndOrder() {
        var records = ConflictRecords([Self.records[0]])
        let kept = records
        records.append(Self.records[1])
        records.append(Self.records[2])
        records.removeRecords(from: 1)
        #expect(records == kept)
        #expect(records.bytes.count == kept.bytes.count && records.propertyValues.count == kept.propertyValues.count)
        records.append(Self.records[2])
        records.append(Self.records[1])
        records.append(Self.records[0])
        records.orderRecords(from: 1, by: [9, 3, 9])
        #expect(Array(records) == [Self.records[0], Self.records[1], Self.records[2], Self.records[0]])
        records.removeRecords(from: 1)
        #expect(records == kept)
    }

    @Test("batch cells become values of the records: text copied, a blob as its hex text")
    func cellsOfABatch() {
        var batch = RowBatch()
        batch.beginRow(line: 1, layout: 0)
        batch.append(.text("dep ✓"))
        batch.append(.blob([0xAB, 0x01]))
        batch.append(.real(2.5))
        var records = ConflictRecords()
        let names = (records.name("job"), records.name("E"), records.name("id"), records.name("c"))
        let text = records.value(batch, at: 0), blob = records.value(batch, at: 1), real = records.value(batch, at: 2)
        records.begin(job: names.0, entity: names.1, kind: .constraint, policy: .overwrite, outcome: .overwritten, changedBy: names.0)
        records.appendKey(name: names.2, value: text)
        records.appendProperty(name: names.3, original: .null, store: blob, ours: real, resolved: text)
        #expect(records[0] == MergeConflictRecord(job: "job", entity: "E", key: ["id": .text("dep ✓")], kind: .constraint,
                                                  policy: .overwrite, outcome: .overwritten, changedBy: "job", properties: [
                                                      .init(name: "c", original: .null, store: .text("ab1"), ours: .real(2.5),
                                                            resolved: .text("dep ✓")),
                                                  ]))
    }

    @Test("cells compare as StoreValues do: text by canonical equivalence and ill-formed bytes as U+FFFD; blobs by bytes")
    func cellsCompareAsValues() {
        var batch = RowBatch()
        batch.beginRow(line: 1, layout: 0)
        let texts: [[UInt8]] = [Array("é".utf8), Array("e\u{301}".utf8), [0x61, 0xFF], [0x61, 0xFE], Array("a".utf8), Array("b".utf8)]
        for text in texts { text.withUnsafeBufferPointer { batch.appendText($0) } }
        [0x61, 0xFF].withUnsafeBufferPointer { batch.appendBlob($0) }
        [0x61, 0xFE].withUnsafeBufferPointer { batch.appendBlob($0) }
        batch.append(.real(0.0))
        batch.append(.real(-0.0))
        batch.append(.integer(0))
        for one in 0..<11 {
            for two in 0..<11 {
                #expect(RowBatch.cellsEqual(batch, one, batch, two) == (batch.value(at: one) == batch.value(at: two)), "cells \(one) and \(two)")
            }
        }
        #expect(RowBatch.cellsEqual(batch, 0, batch, 1) && RowBatch.cellsEqual(batch, 2, batch, 3) && !RowBatch.cellsEqual(batch, 6, batch, 7))
        // Ill-formed text goes into the records as a String holds it, so the JSON report is valid UTF-8.
        var records = ConflictRecords()
        let cell = records.value(batch, at: 2)
        #expect(records.text(cell) == "a\u{FFFD}" && records.bytes == Array("a\u{FFFD}".utf8))
    }
}
