import BatchRunStore
import Foundation

/// Decodes a record from a row of its entity, without JSON: each property read straight from
/// its column's place. A property the entity has no column for, a NULL for a non-optional, or
/// a stored value the property's type cannot take is a `ContextError.recordMismatch`.
struct RecordDecoder: Decoder {
    package let entity: Entity
    /// The record's type, named only in errors.
    let recordType: Any.Type
    package let values: [StoreValue]
    package var codingPath: [any CodingKey] { [] }
    package var userInfo: [CodingUserInfoKey: Any] { [:] }

    package static func record<R: Record>(_ type: R.Type, from values: [StoreValue], entity: Entity) throws -> R {
        try R(from: RecordDecoder(entity: entity, recordType: R.self, values: values))
    }

    package func mismatch(_ column: String, _ problem: String) -> ContextError {
        .recordMismatch(record: String(describing: recordType), entity: entity.name, column: column, problem: problem)
    }

    /// The mismatch of a stored `value` that a property of type `type` cannot take.
    package func problem(_ column: String, _ value: StoreValue, _ type: Any.Type) -> ContextError {
        if value == .null { return mismatch(column, "NULL does not fit a non-optional \(type); make the property optional") }
        return mismatch(column, "\(value.kindDescription) does not fit a \(type); declare the property as the column's type")
    }

    package func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(RowDecodingContainer<Key>(decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw mismatch("(the record)", "a record is decoded as a keyed container (a struct with properties), not a list")
    }

    package func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw mismatch("(the record)", "a record is decoded as a keyed container (a struct with properties), not one value")
    }

    /// The stored value of a property of type `T`: `Date` from its ISO 8601 text, `Data` from a
    /// blob, others (enums of a raw value) through a one-value decoder.
    package func decode<T: Decodable>(_ type: T.Type, from value: StoreValue, column: String) throws -> T {
        if T.self == Date.self {
            guard case .text(let text) = value, let date = DateText.date(text) else { throw problem(column, value, T.self) }
            return date as! T
        }
        if T.self == Data.self {
            guard case .blob(let bytes) = value else { throw problem(column, value, T.self) }
            return Data(bytes) as! T
        }
        do {
            return try T(from: ValueDecoder(decoder: self, column: column, value: value))
        } catch let error as ContextError {
            throw error
        } catch {
            throw mismatch(column, "\(value.kindDescription) does not make a \(T.self): \(error)")
        }
    }
}

extension StoreValue {
    /// 1 and 0 only (a `boolean` column's values).
    fileprivate var boolValue: Bool? {
        switch self {
        case .integer(0): false
        case .integer(1): true
        default: nil
        }
    }

    /// An integer or a real.
    fileprivate var doubleValue: Double? {
        switch self {
        case .integer(let int): Double(int)
        case .real(let real): real
        default: nil
        }
    }

    /// What kind of value this is, for messages: "text \"abc\"", "integer 3".
    var kindDescription: String {
        switch self {
        case .null: "NULL"
        case .integer(let int): "integer \(int)"
        case .real(let real): "real \(real)"
        case .text(let text): "text \"\(text.count > 40 ? text.prefix(40) + "..." : text)\""
        case .blob(let bytes): "a blob of \(bytes.count) bytes"
        }
    }
}

/// A row's columns by the record's keys. Every key is "contained": a key the entity has no
/// column for throws when read (even as an optional), so a record that does not map onto its
/// entity fails loudly instead of reading nil.
private struct RowDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: RecordDecoder
    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { decoder.entity.columns.compactMap { Key(stringValue: $0.name) } }

    func contains(_ key: Key) -> Bool { true }

    private func value(_ key: Key) throws -> StoreValue {
        guard let index = decoder.entity.position(ofColumn: key.stringValue) else {
            throw decoder.mismatch(key.stringValue, "the entity has no such column; add it to the model, or name a column in the record's CodingKeys")
        }
        return decoder.values[index]
    }

    func decodeNil(forKey key: Key) throws -> Bool { try value(key) == .null }
    func decode(_ t: Bool.Type, forKey key: Key) throws -> Bool { let value = try self.value(key); guard let bool = value.boolValue else { throw decoder.problem(key.stringValue, value, t) }; return bool }
    func decode(_ t: String.Type, forKey key: Key) throws -> String { let value = try self.value(key); guard case .text(let text) = value else { throw decoder.problem(key.stringValue, value, t) }; return text }
    func decode(_ t: Double.Type, forKey key: Key) throws -> Double { let value = try self.value(key); guard let double = value.doubleValue else { throw decoder.problem(key.stringValue, value, t) }; return double }
    func decode(_ t: Float.Type, forKey key: Key) throws -> Float { let value = try self.value(key); guard let double = value.doubleValue else { throw decoder.problem(key.stringValue, value, t) }; return Float(double) }
    func decode(_ t: Int.Type, forKey key: Key) throws -> Int { let value = try self.value(key); guard case .integer(let int) = value, let exact = Int(exactly: int) else { throw decoder.problem(key.stringValue, value, t) }; return exact }
    func decode(_ t: Int8.Type, forKey key: Key) throws -> Int8 { let value = try self.value(key); guard case .integer(let int) = value, let exact = Int8(exactly: int) else { throw decoder.problem(key.stringValue, value, t) }; return exact }
    func decode(_ t: Int16.Type, forKey key: Key) throws -> Int16 { let value = try self.value(key); guard case .integer(let int) = value, let exact = Int16(exactly: int) else { throw decoder.problem(key.stringValue, value, t) }; return exact }
    func decode(_ t: Int32.Type, forKey key: Key) throws -> Int32 { let value = try self.value(key); guard case .integer(let int) = value, let exact = Int32(exactly: int) else { throw decoder.problem(key.stringValue, value, t) }; return exact }
    func decode(_ t: Int64.Type, forKey key: Key) throws -> Int64 { let value = try self.value(key); guard case .integer(let int) = value, let exact = Int64(exactly: int) else { throw decoder.problem(key.stringValue, value, t) }; return exact }
    func decode(_ t: UInt.Type, forKey key: Key) throws -> UInt { let value = try self.value(key); guard case .integer(let int) = value, let exact = UInt(exactly: int) else { throw decoder.problem(key.stringValue, value, t) }; return exact }
    func decode(_ t: UInt8.Type, forKey key: Key) throws -> UInt8 { let value = try self.value(key); guard case .integer(let int) = value, let exact = UInt8(exactly: int) else { throw decoder.problem(key.stringValue, value, t) }; return exact }
    func decode(_ t: UInt16.Type, forKey key: Key) throws -> UInt16 { let value = try self.value(key); guard case .integer(let int) = value, let exact = UInt16(exactly: int) else { throw decoder.problem(key.stringValue, value, t) }; return exact }
    func decode(_ t: UInt32.Type, forKey key: Key) throws -> UInt32 { let value = try self.value(key); guard case .integer(let int) = value, let exact = UInt32(exactly: int) else { throw decoder.problem(key.stringValue, value, t) }; return exact }
    func decode(_ t: UInt64.Type, forKey key: Key) throws -> UInt64 { let value = try self.value(key); guard case .integer(let int) = value, let exact = UInt64(exactly: int) else { throw decoder.problem(key.stringValue, value, t) }; return exact }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try decoder.decode(type, from: value(key), column: key.stringValue)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        throw decoder.mismatch(key.stringValue, RecordEncoder.nestedProblem)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        throw decoder.mismatch(key.stringValue, RecordEncoder.nestedProblem)
    }

    func superDecoder() throws -> any Decoder {
        throw decoder.mismatch("super", "a record is a struct of columns; class inheritance has no columns")
    }

    func superDecoder(forKey key: Key) throws -> any Decoder { try superDecoder() }
}

/// One column's value, for a property type that decodes one value (an enum of a raw value).
private struct ValueDecoder: Decoder {
    let decoder: RecordDecoder
    let column: String
    let value: StoreValue
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        throw decoder.mismatch(column, RecordEncoder.nestedProblem)
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw decoder.mismatch(column, RecordEncoder.nestedProblem)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { Single(decoder: self) }

    private struct Single: SingleValueDecodingContainer {
        let decoder: ValueDecoder
        var codingPath: [any CodingKey] { [] }
        func problem(_ value: StoreValue, _ type: Any.Type) -> ContextError { decoder.decoder.problem(decoder.column, value, type) }
        func decodeNil() -> Bool { decoder.value == .null }
        func decode(_ t: Bool.Type) throws -> Bool { let value = decoder.value; guard let bool = value.boolValue else { throw self.problem(value, t) }; return bool }
        func decode(_ t: String.Type) throws -> String { let value = decoder.value; guard case .text(let text) = value else { throw self.problem(value, t) }; return text }
        func decode(_ t: Double.Type) throws -> Double { let value = decoder.value; guard let double = value.doubleValue else { throw self.problem(value, t) }; return double }
        func decode(_ t: Float.Type) throws -> Float { let value = decoder.value; guard let double = value.doubleValue else { throw self.problem(value, t) }; return Float(double) }
        func decode(_ t: Int.Type) throws -> Int { let value = decoder.value; guard case .integer(let int) = value, let exact = Int(exactly: int) else { throw self.problem(value, t) }; return exact }
        func decode(_ t: Int8.Type) throws -> Int8 { let value = decoder.value; guard case .integer(let int) = value, let exact = Int8(exactly: int) else { throw self.problem(value, t) }; return exact }
        func decode(_ t: Int16.Type) throws -> Int16 { let value = decoder.value; guard case .integer(let int) = value, let exact = Int16(exactly: int) else { throw self.problem(value, t) }; return exact }
        func decode(_ t: Int32.Type) throws -> Int32 { let value = decoder.value; guard case .integer(let int) = value, let exact = Int32(exactly: int) else { throw self.problem(value, t) }; return exact }
        func decode(_ t: Int64.Type) throws -> Int64 { let value = decoder.value; guard case .integer(let int) = value, let exact = Int64(exactly: int) else { throw self.problem(value, t) }; return exact }
        func decode(_ t: UInt.Type) throws -> UInt { let value = decoder.value; guard case .integer(let int) = value, let exact = UInt(exactly: int) else { throw self.problem(value, t) }; return exact }
        func decode(_ t: UInt8.Type) throws -> UInt8 { let value = decoder.value; guard case .integer(let int) = value, let exact = UInt8(exactly: int) else { throw self.problem(value, t) }; return exact }
        func decode(_ t: UInt16.Type) throws -> UInt16 { let value = decoder.value; guard case .integer(let int) = value, let exact = UInt16(exactly: int) else { throw self.problem(value, t) }; return exact }
        func decode(_ t: UInt32.Type) throws -> UInt32 { let value = decoder.value; guard case .integer(let int) = value, let exact = UInt32(exactly: int) else { throw self.problem(value, t) }; return exact }
        func decode(_ t: UInt64.Type) throws -> UInt64 { let value = decoder.value; guard case .integer(let int) = value, let exact = UInt64(exactly: int) else { throw self.problem(value, t) }; return exact }
        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            try decoder.decoder.decode(type, from: decoder.value, column: decoder.column)
        }
    }
}
