/// The conflicts of a step or a run, in the order they were met: a collection of
/// `MergeConflictRecord`s kept compact. Each conflict is one small entry; its key and property
/// values sit in flat arrays with their text in one byte buffer, and names (jobs, entities,
/// columns) are stored once. A record is built when it is read, so a run with 200,000
/// conflicts holds a few arrays instead of a million small allocations, and the JSON report is
/// written straight from them.
///
/// ```swift
/// let report = try await run.run()
/// for record in report.conflicts.prefix(10) { print(record.key, record.outcome) }
/// let failed = report.conflicts.filter { $0.outcome == .failed }   // [MergeConflictRecord]
/// ```
public struct ConflictRecords: RandomAccessCollection, Sendable, Hashable, Codable, ExpressibleByArrayLiteral {
    /// One conflict: indexes into `names`, its outcome, and where its values are.
    package struct Entry: Sendable {
        package var job: Int32
        package var entity: Int32
        package var changedBy: Int32
        package var kind: MergeConflict.Kind
        package var policy: MergePolicy
        package var outcome: MergeConflict.Outcome
        package var keys: Range<Int32>
        package var properties: Range<Int32>
        /// `bytes.count` when the entry began: what removing it gives back.
        var bytesStart: Int
    }

    /// A value of a record: null, an integer, a real (its bits), or text (`bytes[number...]`,
    /// `length` bytes). Report is the bottom layer: its own type, not the Store's cells.
    package struct Value: Sendable {
        package enum Kind: UInt8, Sendable { case null, integer, real, text }
        package var number: Int64
        package var length: Int32
        package var kind: Kind

        package static let null = Value(number: 0, length: 0, kind: .null)

        package static func integer(_ value: Int64) -> Value { Value(number: value, length: 0, kind: .integer) }
        package static func real(_ value: Double) -> Value { Value(number: Int64(bitPattern: value.bitPattern), length: 0, kind: .real) }
    }

    /// A key column and its value.
    package struct KeyValue: Sendable {
        package var name: Int32
        package var value: Value
    }

    /// A property's four values (`.null` for none); text in `bytes`.
    package struct PropertyValues: Sendable {
        package var name: Int32
        package var original: Value
        package var store: Value
        package var ours: Value
        package var resolved: Value
    }

    package private(set) var names: [String] = []
    private var nameIndexes: [String: Int32] = [:]
    package private(set) var entries: [Entry] = []
    package private(set) var keyValues: [KeyValue] = []
    package private(set) var propertyValues: [PropertyValues] = []
    package private(set) var bytes: [UInt8] = []

    package init() {}

    /// The records given, in order.
    package init(_ records: some Sequence<MergeConflictRecord>) {
        for record in records { append(record) }
    }

    public init(arrayLiteral records: MergeConflictRecord...) {
        self.init(records)
    }

    // MARK: Collection

    public var startIndex: Int { 0 }
    public var endIndex: Int { entries.count }

    /// The record at `position`, built from its entry.
    public subscript(position: Int) -> MergeConflictRecord {
        let entry = entries[position]
        var key: [String: JSONValue] = [:]
        for index in entry.keys { key[names[Int(keyValues[Int(index)].name)]] = json(keyValues[Int(index)].value) }
        return MergeConflictRecord(
            job: names[Int(entry.job)], entity: names[Int(entry.entity)], key: key, kind: entry.kind, policy: entry.policy,
            outcome: entry.outcome, changedBy: names[Int(entry.changedBy)],
            properties: entry.properties.map { index in
                let values = propertyValues[Int(index)]
                return .init(name: names[Int(values.name)], original: json(values.original), store: json(values.store),
                             ours: json(values.ours), resolved: json(values.resolved))
            })
    }

    /// The outcome of the conflict at `position`, without building its record.
    package func outcome(at position: Int) -> MergeConflict.Outcome {
        entries[position].outcome
    }

    /// The job, entity, kind and outcome of the conflict at `position`, without building its
    /// record (what a summary counts).
    package func summary(at position: Int) -> (job: String, entity: String, kind: MergeConflict.Kind, outcome: MergeConflict.Outcome) {
        let entry = entries[position]
        return (names[Int(entry.job)], names[Int(entry.entity)], entry.kind, entry.outcome)
    }

    // MARK: Changing

    /// Adds `record` at the end.
    package mutating func append(_ record: MergeConflictRecord) {
        begin(job: name(record.job), entity: name(record.entity), kind: record.kind, policy: record.policy,
              outcome: record.outcome, changedBy: name(record.changedBy))
        for (column, keyValue) in record.key.sorted(by: { $0.key < $1.key }) {
            appendKey(name: name(column), value: value(json: keyValue))
        }
        for property in record.properties {
            appendProperty(name: name(property.name), original: value(json: property.original), store: value(json: property.store),
                           ours: value(json: property.ours), resolved: value(json: property.resolved))
        }
    }

    /// Adds `records` at the end.
    package mutating func append(contentsOf records: some Sequence<MergeConflictRecord>) {
        for record in records { append(record) }
    }

    /// Adds every record of `other` at the end, its entries moved over (a run's steps' records).
    package mutating func append(contentsOf other: ConflictRecords) {
        if entries.isEmpty && names.isEmpty {
            self = other
            return
        }
        let renamed = other.names.map { name($0) }
        let keyShift = Int32(keyValues.count), propertyShift = Int32(propertyValues.count), byteShift = Int64(bytes.count)
        func moved(_ cell: Value) -> Value {
            var cell = cell
            if cell.kind == .text { cell.number += byteShift }
            return cell
        }
        for entry in other.entries {
            var entry = entry
            entry.job = renamed[Int(entry.job)]
            entry.entity = renamed[Int(entry.entity)]
            entry.changedBy = renamed[Int(entry.changedBy)]
            entry.keys = (entry.keys.lowerBound + keyShift)..<(entry.keys.upperBound + keyShift)
            entry.properties = (entry.properties.lowerBound + propertyShift)..<(entry.properties.upperBound + propertyShift)
            entry.bytesStart += Int(byteShift)
            entries.append(entry)
        }
        keyValues.append(contentsOf: other.keyValues.lazy.map { KeyValue(name: renamed[Int($0.name)], value: moved($0.value)) })
        propertyValues.append(contentsOf: other.propertyValues.lazy.map {
            PropertyValues(name: renamed[Int($0.name)], original: moved($0.original), store: moved($0.store), ours: moved($0.ours),
                           resolved: moved($0.resolved))
        })
        bytes.append(contentsOf: other.bytes)
    }

    /// Removes the records from `start` on (a batch that did not commit takes its own back).
    package mutating func removeRecords(from start: Int) {
        guard start < entries.count else { return }
        let removed = entries[start...]
        // Entries after `start` were added after every entry before it (only a batch's own
        // tail is ever reordered), so their values are the arrays' tails.
        let keys = Int(removed.map(\.keys.lowerBound).min()!), properties = Int(removed.map(\.properties.lowerBound).min()!)
        let byteCount = removed.map(\.bytesStart).min()!
        entries.removeSubrange(start...)
        keyValues.removeSubrange(keys...)
        propertyValues.removeSubrange(properties...)
        bytes.removeSubrange(byteCount...)
    }

    /// Puts the records from `start` on in the order of `rows` (one per record from `start`),
    /// stable among equal rows: a batch's conflicts as its feed rows come.
    package mutating func orderRecords(from start: Int, by rows: [Int]) {
        precondition(rows.count == entries.count - start, "one row per record")
        guard zip(rows, rows.dropFirst()).contains(where: { $0 > $1 }) else { return }
        let order = rows.indices.sorted { rows[$0] < rows[$1] || (rows[$0] == rows[$1] && $0 < $1) }
        let tail = Array(entries[start...])
        for (offset, index) in order.enumerated() { entries[start + offset] = tail[index] }
    }

    // MARK: Building a record from its parts (the import's hot path)

    /// The index of `name` in the names table, added when new.
    package mutating func name(_ name: String) -> Int32 {
        if let index = nameIndexes[name] { return index }
        let index = Int32(names.count)
        names.append(name)
        nameIndexes[name] = index
        return index
    }

    /// Starts a record; its keys and properties follow with `appendKey` and `appendProperty`.
    package mutating func begin(job: Int32, entity: Int32, kind: MergeConflict.Kind, policy: MergePolicy,
                        outcome: MergeConflict.Outcome, changedBy: Int32) {
        let keys = Int32(keyValues.count), properties = Int32(propertyValues.count)
        entries.append(Entry(job: job, entity: entity, changedBy: changedBy, kind: kind, policy: policy, outcome: outcome,
                             keys: keys..<keys, properties: properties..<properties, bytesStart: bytes.count))
    }

    /// Adds a key column to the record begun last.
    package mutating func appendKey(name: Int32, value: Value) {
        keyValues.append(KeyValue(name: name, value: value))
        entries[entries.count - 1].keys = entries[entries.count - 1].keys.lowerBound..<Int32(keyValues.count)
    }

    /// Adds a property to the record begun last.
    package mutating func appendProperty(name: Int32, original: Value, store: Value, ours: Value,
                                 resolved: Value) {
        propertyValues.append(PropertyValues(name: name, original: original, store: store, ours: ours, resolved: resolved))
        entries[entries.count - 1].properties = entries[entries.count - 1].properties.lowerBound..<Int32(propertyValues.count)
    }

    /// Text as a value of these records, its bytes copied in: non-ASCII text as a String holds
    /// it (an ill-formed sequence as U+FFFD, as the report writes a value: its JSON is valid UTF-8).
    package mutating func text(utf8 text: ArraySlice<UInt8>) -> Value {
        let start = bytes.count
        if text.contains(where: { $0 >= 0x80 }) {
            bytes.append(contentsOf: String(decoding: text, as: UTF8.self).utf8)
        } else {
            bytes.append(contentsOf: text)
        }
        return Value(number: Int64(start), length: Int32(bytes.count - start), kind: .text)
    }

    /// A value of these records for `value` (`nil` is null; a blob as its hex text, as the report writes one).
    package mutating func value(_ value: StoreValue?) -> Value {
        self.value(json: value?.jsonValue ?? .null)
    }

    private mutating func value(json value: JSONValue) -> Value {
        switch value {
        case .null: return .null
        case .integer(let int): return .integer(int)
        case .real(let double): return .real(double)
        case .text(var text):
            let start = bytes.count
            text.withUTF8 { bytes.append(contentsOf: $0) }
            return Value(number: Int64(start), length: Int32(bytes.count - start), kind: .text)
        }
    }

    private func json(_ cell: Value) -> JSONValue {
        switch cell.kind {
        case .null: return .null
        case .integer: return .integer(cell.number)
        case .real: return .real(Double(bitPattern: UInt64(bitPattern: cell.number)))
        case .text: return .text(text(cell))
        }
    }

    /// A text cell's string.
    package func text(_ cell: Value) -> String {
        bytes.withUnsafeBufferPointer { buffer in
            String(decoding: UnsafeBufferPointer(rebasing: buffer[Int(cell.number)..<(Int(cell.number) + Int(cell.length))]), as: UTF8.self)
        }
    }

    // MARK: Equality, hashing, coding: as the records they hold

    public static func == (lhs: ConflictRecords, rhs: ConflictRecords) -> Bool {
        lhs.count == rhs.count && lhs.elementsEqual(rhs)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        for record in self { hasher.combine(record) }
    }

    public init(from decoder: any Decoder) throws {
        self.init(try [MergeConflictRecord](from: decoder))
    }

    public func encode(to encoder: any Encoder) throws {
        try Array(self).encode(to: encoder)
    }
}

extension ConflictRecords {
    /// True when both hold the same records in the same order.
    public static func == (lhs: ConflictRecords, rhs: [MergeConflictRecord]) -> Bool {
        lhs.count == rhs.count && lhs.elementsEqual(rhs)
    }
}
