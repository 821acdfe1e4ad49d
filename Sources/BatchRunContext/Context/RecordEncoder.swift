import BatchRunStore
import Foundation

/// Encodes a record into a row of its entity, without JSON: each property's value goes
/// straight into its column's place, type-checked as `ManagedObject.set` checks it
/// (`ContextError.wrongType`), and the columns given are noted. A property the entity has no
/// column for, or of a nested type, is a `ContextError.recordMismatch`. A nil optional is NULL.
///
/// A context keeps one per record type and encodes every record of it with it (`encodeRow`
/// for an insert, into a row kept from record to record; `row(of:)`, a row of its own, for an
/// update or delete): it learns the order the type encodes its keys in from the first record, so the next ones
/// find each column without a look-up by name and share one list of given columns.
///
/// Exclusivity: the properties marked `@exclusivity(unchecked)` are read and written only by
/// this encoder and its containers, one statement at a time, inside one `encodeRow` or `row(of:)` on the
/// context's isolation (a record's `encode(to:)` runs synchronously in it; `inUse` keeps a
/// nested use on an encoder of its own): no two accesses overlap, so the runtime's dynamic
/// check, which showed in record inserts' profile, is left out.
package final class RecordEncoder: Encoder {
    package let entity: Entity
    /// The record's type, named only in errors (naming it for every row showed in inserts).
    let recordType: Any.Type
    package var record: String { String(describing: recordType) }
    /// The column types, by position (read per property: no copy of a `Column`).
    package let types: [ColumnType]
    /// The row, in column order: NULL where the record gave nothing.
    @exclusivity(unchecked) package var values: [StoreValue]
    /// The columns given, in the order the record encoded them: the first `givenCount` of
    /// `givenSlots`, whose room is kept from one record to the next (emptying and growing an
    /// array per record cost a record insert about 180 instructions).
    @exclusivity(unchecked) private var givenSlots: [Int]
    @exclusivity(unchecked) private var givenCount = 0
    /// The first mismatch met where no error could be thrown (a nested container asked for).
    @exclusivity(unchecked) package var failure: ContextError?
    /// The keys of the first record encoded, in order, and their columns; `learnedGiven` those
    /// columns sorted (the given columns of every record encoded in the same order).
    @exclusivity(unchecked) private var learnedKeys: [String] = []
    @exclusivity(unchecked) private var learnedColumns: [Int] = []
    private var learnedGiven: [Int] = []
    /// Set when this record's keys left the learned order (then found by name).
    @exclusivity(unchecked) private var offOrder = false
    /// The keys met, while the first record's are being learned.
    @exclusivity(unchecked) private var meeting: [String]?
    /// Set while a record is being encoded.
    private(set) var inUse = false
    /// The container handed to the last record and the type of its keys: the next record of
    /// those keys gets it again (making and freeing one per record, a class instance behind
    /// `KeyedEncodingContainer`, cost about 1,200 of a record insert's 14,500 instructions;
    /// reusing it saves about 300 of them). Only an encoder a context keeps keeps its container
    /// (`keepsContainer`): the container holds its encoder strongly (an `unowned` reference cost
    /// two reference-count checks a property, 210 instructions a record), and the context calls
    /// `releaseContainer()` when it lets the encoder go, which breaks that cycle.
    private var reusedContainer: AnyObject?
    private var reusedKeys: ObjectIdentifier?
    var keepsContainer = false
    package var codingPath: [any CodingKey] { [] }
    package var userInfo: [CodingUserInfoKey: Any] { [:] }

    package init(entity: Entity, recordType: Any.Type) {
        self.entity = entity
        self.recordType = recordType
        types = entity.columns.map(\.type)
        values = []
        givenSlots = Array(repeating: 0, count: types.count)
    }

    /// The row of `record` (of this encoder's type), type-checked, and the columns it gave (sorted).
    package func row<R: Record>(of record: R) throws -> (values: [StoreValue], given: [Int]) {
        values = Array(repeating: .null, count: types.count)
        defer { values = [] }   // the row returned is the caller's alone
        let given = try encode(record)
        return (values, given)
    }

    /// Encodes `record` into `values`, whose array is kept from one record to the next (a
    /// record insert copies the given columns out, then `clearRow`s them): the columns it gave,
    /// sorted. On an error `values` is left empty.
    func encodeRow<R: Record>(_ record: R) throws -> [Int] {
        if values.count != types.count { values = Array(repeating: .null, count: types.count) }
        do {
            return try encode(record)
        } catch {
            values = []
            throw error
        }
    }

    /// NULL again in the columns `encodeRow` gave, ready for the next record.
    func clearRow(_ given: [Int]) {
        for index in given { values[index] = .null }
    }

    /// The row `encodeRow` made, handed over whole (the next record gets a new array).
    func takeRow() -> [StoreValue] {
        defer { values = [] }
        return values
    }

    /// Encodes `record` into `values` (NULL in every column): the columns it gave, sorted.
    private func encode<R: Record>(_ record: R) throws -> [Int] {
        givenCount = 0
        if failure != nil { failure = nil }
        offOrder = false
        meeting = learnedKeys.isEmpty ? [] : nil
        inUse = true
        defer {
            inUse = false
            meeting = nil
        }
        try record.encode(to: self)
        if let failure { throw failure }
        if !offOrder, givenCount == learnedColumns.count, !learnedColumns.isEmpty { return learnedGiven }
        let given = Array(givenSlots[..<givenCount])
        var sorted = given
        if zip(sorted, sorted.dropFirst()).contains(where: { $0 > $1 }) { sorted.sort() }
        if let meeting, !meeting.isEmpty, meeting.count == given.count {
            learnedKeys = meeting
            learnedColumns = given
            learnedGiven = sorted
        }
        return sorted
    }

    /// The position of the column of `key`, the next key: from the learned order when the
    /// record keeps to it, else by name (nil: the entity has no such column).
    package func position(of key: String) -> Int? {
        let next = givenCount
        if !offOrder, next < learnedKeys.count, learnedKeys[next] == key { return learnedColumns[next] }
        if !learnedKeys.isEmpty { offOrder = true }
        meeting?.append(key)
        return entity.position(ofColumn: key)
    }

    /// Puts `value` in the column named `column` (see `put(_:at:dateText:)`): one call per
    /// property from a container.
    package func put(_ value: StoreValue, column: String, dateText: Bool) throws {
        guard let index = position(of: column) else {
            throw mismatch(column, "the entity has no such column; add it to the model, or name a column in the record's CodingKeys")
        }
        try put(value, at: index, dateText: dateText)
    }

    /// Puts `value` in the column at `index`, type-checked; `dateText`: a value known to fit a
    /// `datetime` or `text` column (a `Date`'s text), not checked again there.
    package func put(_ value: StoreValue, at index: Int, dateText: Bool = false) throws {
        let type = types[index]
        if dateText, type == .datetime || type == .text {
            values[index] = value
        } else if let fitted = type.fitting(value) {
            values[index] = fitted
        } else {
            values[index] = try entity.fitting(value, at: index)   // throws the error naming the column
        }
        if givenCount < givenSlots.count { givenSlots[givenCount] = index } else { givenSlots.append(index) }   // a key given twice
        givenCount += 1
    }

    /// One value as a column stores it (a filter's operand): `Int`, `Double`, `String`, `Bool`,
    /// `Date`, `Data`, optionals, and types encoding one of them (`RawRepresentable` enums).
    package static func storeValue<T: Encodable>(_ value: T, record: @autoclosure () -> String, entity: String, column: String) throws -> StoreValue {
        // Dates and Data first: a record's Int, String, Double and Bool come through the
        // containers' own overloads, so these are what the generic path sees most.
        switch value {
        case let value as Date: return .text(DateText.text(value))
        case let value as Data: return .blob([UInt8](value))
        case let value as Int: return .integer(Int64(value))
        case let value as String: return .text(value)
        case let value as Double: return .real(value)
        case let value as Bool: return .integer(value ? 1 : 0)
        case let value as Int64: return .integer(value)
        default:
            let capture = ValueEncoder()
            do {
                try value.encode(to: capture)
            } catch {
                if capture.failure == nil { throw error }   // a keyed or unkeyed value: named below, with its column
            }
            guard let captured = capture.value, capture.failure == nil else {
                throw ContextError.recordMismatch(record: record(), entity: entity, column: column,
                                                  problem: "a \(T.self) is not one value; use Int, Int64, Double, String, Bool, Date, Data, an optional, or an enum of one")
            }
            return captured
        }
    }

    package static func integer<T: BinaryInteger>(_ value: T) throws -> StoreValue {
        guard let exact = Int64(exactly: value) else {
            throw EncodingError.invalidValue(value, EncodingError.Context(codingPath: [], debugDescription: "\(value) does not fit a 64-bit integer column"))
        }
        return .integer(exact)
    }

    package func mismatch(_ column: String, _ problem: String) -> ContextError {
        .recordMismatch(record: record, entity: entity.name, column: column, problem: problem)
    }

    static let nestedProblem = "a property of a nested type (a struct, an array, a dictionary) has no column; store its parts in columns of their own"

    package func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if reusedKeys == ObjectIdentifier(Key.self), let reused = reusedContainer {
            // Made below for exactly these keys: the cast holds (and is not checked again).
            return unsafeDowncast(reused, to: ContainerHolder<Key>.self).container
        }
        let container = KeyedEncodingContainer(RowEncodingContainer<Key>(encoder: self, nestedIn: nil))
        if keepsContainer {
            reusedContainer = ContainerHolder(container)
            reusedKeys = ObjectIdentifier(Key.self)
        }
        return container
    }

    /// Lets the kept container go (and with it the container's reference to this encoder).
    func releaseContainer() {
        reusedContainer = nil
        reusedKeys = nil
    }

    /// A container kept for the next record (a class, so it can wait in an `AnyObject`).
    private final class ContainerHolder<Key: CodingKey> {
        let container: KeyedEncodingContainer<Key>
        init(_ container: KeyedEncodingContainer<Key>) { self.container = container }
    }

    package func unkeyedContainer() -> any UnkeyedEncodingContainer {
        failure = failure ?? mismatch("(the record)", "a record is encoded as a keyed container (a struct with properties), not a list")
        return ValueEncoder.Refusing()
    }

    package func singleValueContainer() -> any SingleValueEncodingContainer {
        failure = failure ?? mismatch("(the record)", "a record is encoded as a keyed container (a struct with properties), not one value")
        return ValueEncoder.Refusing()
    }
}

/// The record's properties into the encoder's row (`nestedIn`: a nested container, refused).
private struct RowEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    /// Strong: a kept container and its encoder refer to each other until the context lets
    /// the encoder go (`RecordEncoder.releaseContainer()`).
    let encoder: RecordEncoder
    let nestedIn: String?

    init(encoder: RecordEncoder, nestedIn: String?) {
        self.encoder = encoder
        self.nestedIn = nestedIn
    }
    var codingPath: [any CodingKey] { [] }

    private func put(_ value: StoreValue, _ key: Key, dateText: Bool = false) throws {
        if let nestedIn { throw encoder.mismatch(nestedIn, RecordEncoder.nestedProblem) }
        try encoder.put(value, column: key.stringValue, dateText: dateText)
    }

    mutating func encodeNil(forKey key: Key) throws { try put(.null, key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { try put(.integer(value ? 1 : 0), key) }
    mutating func encode(_ value: String, forKey key: Key) throws { try put(.text(value), key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { try put(.real(value), key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { try put(.real(Double(value)), key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { try put(try RecordEncoder.integer(value), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try put(try RecordEncoder.integer(value), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try put(try RecordEncoder.integer(value), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try put(try RecordEncoder.integer(value), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try put(.integer(value), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try put(try RecordEncoder.integer(value), key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try put(try RecordEncoder.integer(value), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try put(try RecordEncoder.integer(value), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try put(try RecordEncoder.integer(value), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try put(try RecordEncoder.integer(value), key) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        if let nestedIn { throw encoder.mismatch(nestedIn, RecordEncoder.nestedProblem) }
        if T.self == Date.self {
            // A Date's text in the form `DateText` writes (years 1-9999) fits a datetime
            // column: not parsed again to check it.
            let date = unsafeBitCast(value, to: Date.self)
            if let text = DateText.standardText(date) { try put(.text(text), key, dateText: true) } else { try put(.text(DateText.text(date)), key) }
            return
        }
        try put(RecordEncoder.storeValue(value, record: encoder.record, entity: encoder.entity.name, column: key.stringValue), key)
    }

    // A nil optional is NULL (the default implementations would leave the column out).
    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { try put(value.map { StoreValue.integer($0 ? 1 : 0) } ?? .null, key) }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { try put(value.map { StoreValue.text($0) } ?? .null, key) }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { try put(value.map { StoreValue.real($0) } ?? .null, key) }
    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws { try put(value.map { StoreValue.real(Double($0)) } ?? .null, key) }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { try put(value == nil ? .null : RecordEncoder.integer(value!), key) }
    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { try put(value == nil ? .null : RecordEncoder.integer(value!), key) }
    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { try put(value == nil ? .null : RecordEncoder.integer(value!), key) }
    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { try put(value == nil ? .null : RecordEncoder.integer(value!), key) }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { try put(value.map { StoreValue.integer($0) } ?? .null, key) }
    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { try put(value == nil ? .null : RecordEncoder.integer(value!), key) }
    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { try put(value == nil ? .null : RecordEncoder.integer(value!), key) }
    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { try put(value == nil ? .null : RecordEncoder.integer(value!), key) }
    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { try put(value == nil ? .null : RecordEncoder.integer(value!), key) }
    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { try put(value == nil ? .null : RecordEncoder.integer(value!), key) }

    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { try put(.null, key) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        encoder.failure = encoder.failure ?? encoder.mismatch(key.stringValue, RecordEncoder.nestedProblem)
        return KeyedEncodingContainer(RowEncodingContainer<NestedKey>(encoder: encoder, nestedIn: key.stringValue))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        encoder.failure = encoder.failure ?? encoder.mismatch(key.stringValue, RecordEncoder.nestedProblem)
        return ValueEncoder.Refusing()
    }

    mutating func superEncoder() -> any Encoder {
        encoder.failure = encoder.failure ?? encoder.mismatch("super", "a record is a struct of columns; class inheritance has no columns")
        return ValueEncoder()
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder { superEncoder() }
}

/// Captures the one value a type encodes (an enum's raw value, a Date's text); anything
/// else (keyed or unkeyed) is a failure.
final class ValueEncoder: Encoder {
    package var value: StoreValue?
    package var failure: String?
    package var codingPath: [any CodingKey] { [] }
    package var userInfo: [CodingUserInfoKey: Any] { [:] }

    package func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        failure = "keyed"
        let discard = RecordEncoder(entity: Entity(name: "", columns: [], primaryKey: []), recordType: Void.self)
        return KeyedEncodingContainer(RowEncodingContainer<Key>(encoder: discard, nestedIn: ""))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        failure = "unkeyed"
        return Refusing()
    }

    package func singleValueContainer() -> any SingleValueEncodingContainer { Single(encoder: self) }

    private struct Single: SingleValueEncodingContainer {
        let encoder: ValueEncoder
        var codingPath: [any CodingKey] { [] }
        private func put(_ value: StoreValue) throws { encoder.value = value }
        mutating func encodeNil() throws { try put(.null) }
        mutating func encode(_ value: Bool) throws { try put(.integer(value ? 1 : 0)) }
        mutating func encode(_ value: String) throws { try put(.text(value)) }
        mutating func encode(_ value: Double) throws { try put(.real(value)) }
        mutating func encode(_ value: Float) throws { try put(.real(Double(value))) }
        mutating func encode(_ value: Int) throws { try put(try RecordEncoder.integer(value)) }
        mutating func encode(_ value: Int8) throws { try put(try RecordEncoder.integer(value)) }
        mutating func encode(_ value: Int16) throws { try put(try RecordEncoder.integer(value)) }
        mutating func encode(_ value: Int32) throws { try put(try RecordEncoder.integer(value)) }
        mutating func encode(_ value: Int64) throws { try put(.integer(value)) }
        mutating func encode(_ value: UInt) throws { try put(try RecordEncoder.integer(value)) }
        mutating func encode(_ value: UInt8) throws { try put(try RecordEncoder.integer(value)) }
        mutating func encode(_ value: UInt16) throws { try put(try RecordEncoder.integer(value)) }
        mutating func encode(_ value: UInt32) throws { try put(try RecordEncoder.integer(value)) }
        mutating func encode(_ value: UInt64) throws { try put(try RecordEncoder.integer(value)) }
        mutating func encode<T: Encodable>(_ value: T) throws {
            try put(RecordEncoder.storeValue(value, record: "", entity: "", column: ""))
        }
    }

    /// A container every write to throws (unkeyed or single values where a record has none).
    struct Refusing: UnkeyedEncodingContainer, SingleValueEncodingContainer {
        package var codingPath: [any CodingKey] { [] }
        package var count: Int { 0 }
        private func refuse() -> EncodingError {
            EncodingError.invalidValue(0, EncodingError.Context(codingPath: [], debugDescription: RecordEncoder.nestedProblem))
        }
        package mutating func encodeNil() throws { throw refuse() }
        package mutating func encode(_ value: Bool) throws { throw refuse() }
        package mutating func encode(_ value: String) throws { throw refuse() }
        package mutating func encode(_ value: Double) throws { throw refuse() }
        package mutating func encode(_ value: Float) throws { throw refuse() }
        package mutating func encode(_ value: Int) throws { throw refuse() }
        package mutating func encode(_ value: Int8) throws { throw refuse() }
        package mutating func encode(_ value: Int16) throws { throw refuse() }
        package mutating func encode(_ value: Int32) throws { throw refuse() }
        package mutating func encode(_ value: Int64) throws { throw refuse() }
        package mutating func encode(_ value: UInt) throws { throw refuse() }
        package mutating func encode(_ value: UInt8) throws { throw refuse() }
        package mutating func encode(_ value: UInt16) throws { throw refuse() }
        package mutating func encode(_ value: UInt32) throws { throw refuse() }
        package mutating func encode(_ value: UInt64) throws { throw refuse() }
        package mutating func encode<T: Encodable>(_ value: T) throws { throw refuse() }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            ValueEncoder().container(keyedBy: keyType)
        }
        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { Refusing() }
        mutating func superEncoder() -> any Encoder { ValueEncoder() }
    }
}
