import Foundation

/// One value as the store holds it: a column's value, a bound `:name` parameter, or an
/// output published by a fetch's `as:` (GRDB calls its own `DatabaseValue`).
///
/// Literals and typed initialisers make values; typed accessors read them back:
///
/// ```swift
/// let values: [String: StoreValue] = ["id": 41, "user": "ana", "duration": 12.5,
///                                     "active": true, "started_at": StoreValue(Date())]
/// values["id"]?.int            // 41
/// values["active"]?.bool       // true
/// values["started_at"]?.date   // the Date, from its ISO 8601 text
/// ```
///
/// Plain YAML scalars and `--param NAME=VALUE` are typed by YAML's core schema:
/// `StoreValue(plainScalar: "42")` is `.integer(42)`, `"2026-01-01"` stays `.text`.
public enum StoreValue: Sendable, Hashable, CustomStringConvertible {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    package init(plainScalar text: String) {
        switch text {
        case "", "~", "null", "Null", "NULL": self = .null
        case "true", "True", "TRUE": self = .integer(1)
        case "false", "False", "FALSE": self = .integer(0)
        default:
            if let int = Int64(text) {
                self = .integer(int)
            } else if text.first.map({ $0.isNumber || $0 == "-" || $0 == "+" || $0 == "." }) == true,
                      let double = Double(text), double.isFinite {
                self = .real(double)
            } else {
                self = .text(text)
            }
        }
    }

    /// Written out (as Swift would synthesize them) to be `@inlinable`: other modules hash and
    /// compare values per row (IDs in dictionaries, a key's changes).
    @inlinable public static func == (lhs: StoreValue, rhs: StoreValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.integer(let a), .integer(let b)): return a == b
        case (.real(let a), .real(let b)): return a == b
        case (.text(let a), .text(let b)): return a == b
        case (.blob(let a), .blob(let b)): return a == b
        default: return false
        }
    }

    @inlinable public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0 as UInt8)
        case .integer(let value): hasher.combine(1 as UInt8); hasher.combine(value)
        case .real(let value): hasher.combine(2 as UInt8); hasher.combine(value)
        case .text(let value): hasher.combine(3 as UInt8); hasher.combine(value)
        case .blob(let value): hasher.combine(4 as UInt8); hasher.combine(value)
        }
    }

    /// The value as text, for string interpolation and environment variables (`NULL` is empty).
    public var description: String {
        switch self {
        case .null: return ""
        case .integer(let value): return String(value)
        case .real(let value): return String(value)
        case .text(let value): return value
        case .blob(let bytes): return bytes.map { String($0, radix: 16) }.joined()
        }
    }
}

// MARK: Typed initialisers and accessors

extension StoreValue {
    public init(_ value: Int) { self = .integer(Int64(value)) }
    public init(_ value: Int64) { self = .integer(value) }
    public init(_ value: Double) { self = .real(value) }
    public init(_ value: String) { self = .text(value) }
    /// `true` is stored as 1, `false` as 0 (the contract's `boolean`).
    public init(_ value: Bool) { self = .integer(value ? 1 : 0) }
    public init(_ value: Data) { self = .blob([UInt8](value)) }
    /// A date is stored as the contract's ISO 8601 text, in UTC with milliseconds:
    /// `2026-01-31T08:15:00.000Z`.
    /// The nearest millisecond is kept.
    public init(_ value: Date) { self = .text(DateText.text(value)) }
    /// `nil` is `.null`.
    package init<T>(_ value: T?) where T: StoreValueConvertible {
        self = value.map(\.storeValue) ?? .null
    }

    package var isNull: Bool { self == .null }

    /// An integer, or a real with no fraction, as `Int`.
    public var int: Int? {
        switch self {
        case .integer(let value): return Int(exactly: value)
        case .real(let value): return Int(exactly: value)
        default: return nil
        }
    }

    /// An integer or a real as `Double`.
    public var double: Double? {
        switch self {
        case .integer(let value): return Double(value)
        case .real(let value): return value
        default: return nil
        }
    }

    /// Text as `String` (numbers and blobs are not text).
    public var string: String? {
        if case .text(let value) = self { return value }
        return nil
    }

    /// 0 and 1 (and `true`/`false` text, as feeds write them) as `Bool`.
    public var bool: Bool? {
        switch self {
        case .integer(0): return false
        case .integer(1): return true
        case .text(let text): return BooleanText.value(of: text)
        default: return nil
        }
    }

    /// A blob as `Data`.
    public var data: Data? {
        if case .blob(let bytes) = self { return Data(bytes) }
        return nil
    }

    /// ISO 8601 text (a date, or a date and time with an optional fraction and zone; no zone
    /// means UTC) as `Date`.
    public var date: Date? {
        guard case .text(let text) = self else { return nil }
        return DateText.date(text)
    }

    package static func parseDate(_ text: String) -> Date? {
        var text = text.replacingOccurrences(of: " ", with: "T")
        if text.count == 10 { text += "T00:00:00" }
        let hasZone = text.hasSuffix("Z") || text.dropFirst(19).contains { $0 == "+" || $0 == "-" }
        if !hasZone { text += "Z" }
        let withFraction = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        let plain = Date.ISO8601FormatStyle()
        return (try? withFraction.parse(text)) ?? (try? plain.parse(text))
    }
}

// MARK: Literals

extension StoreValue: ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByStringInterpolation,
    ExpressibleByBooleanLiteral, ExpressibleByNilLiteral {
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .real(value) }
    public init(stringLiteral value: String) { self = .text(value) }
    public init(booleanLiteral value: Bool) { self = .integer(value ? 1 : 0) }
    public init(nilLiteral: ()) { self = .null }
}

/// A Swift type that has a `StoreValue`: `Int`, `Int64`, `Double`, `String`, `Bool`, `Date`, `Data`.
package protocol StoreValueConvertible {
    var storeValue: StoreValue { get }
}

extension Int: StoreValueConvertible { package var storeValue: StoreValue { StoreValue(self) } }
extension Int64: StoreValueConvertible { package var storeValue: StoreValue { StoreValue(self) } }
extension Double: StoreValueConvertible { package var storeValue: StoreValue { StoreValue(self) } }
extension String: StoreValueConvertible { package var storeValue: StoreValue { StoreValue(self) } }
extension Bool: StoreValueConvertible { package var storeValue: StoreValue { StoreValue(self) } }
extension Date: StoreValueConvertible { package var storeValue: StoreValue { StoreValue(self) } }
extension Data: StoreValueConvertible { package var storeValue: StoreValue { StoreValue(self) } }

// MARK: Ordering

extension StoreValue {
    /// SQLite's sort order: NULL, then numbers, then text, then blobs.
    package static func sortsBefore(_ lhs: StoreValue, _ rhs: StoreValue) -> Bool {
        func rank(_ value: StoreValue) -> Int {
            switch value {
            case .null: return 0
            case .integer, .real: return 1
            case .text: return 2
            case .blob: return 3
            }
        }
        switch (lhs, rhs) {
        case (.integer(let a), .integer(let b)): return a < b
        case (.integer(let a), .real(let b)): return Double(a) < b
        case (.real(let a), .integer(let b)): return a < Double(b)
        case (.real(let a), .real(let b)): return a < b
        case (.text(let a), .text(let b)): return a < b
        case (.blob(let a), .blob(let b)): return a.lexicographicallyPrecedes(b)
        default: return rank(lhs) < rank(rhs)
        }
    }

    /// Orders keys (lists of values) as SQLite orders rows by them.
    package static func sortsBefore(_ lhs: [StoreValue], _ rhs: [StoreValue]) -> Bool {
        for (a, b) in zip(lhs, rhs) where a != b { return sortsBefore(a, b) }
        return lhs.count < rhs.count
    }
}

// MARK: Codable

/// Encoded with its kind, so a value read back is the same value: `{"integer": 41}`,
/// `{"text": "open"}`, `{"blob": "0a1b"}`, `null`.
extension StoreValue: Codable {
    private enum Kind: String, CodingKey { case integer, real, text, blob }

    public init(from decoder: any Decoder) throws {
        if try decoder.singleValueContainer().decodeNil() {
            self = .null
            return
        }
        let container = try decoder.container(keyedBy: Kind.self)
        if let value = try container.decodeIfPresent(Int64.self, forKey: .integer) { self = .integer(value) }
        else if let value = try container.decodeIfPresent(Double.self, forKey: .real) { self = .real(value) }
        else if let value = try container.decodeIfPresent(String.self, forKey: .text) { self = .text(value) }
        else if let hex = try container.decodeIfPresent(String.self, forKey: .blob) {
            var bytes: [UInt8] = []
            var index = hex.startIndex
            while index < hex.endIndex, let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex),
                  let byte = UInt8(hex[index..<next], radix: 16) {
                bytes.append(byte)
                index = next
            }
            self = .blob(bytes)
        } else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a StoreValue"))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        if self == .null {
            var container = encoder.singleValueContainer()
            try container.encodeNil()
            return
        }
        var container = encoder.container(keyedBy: Kind.self)
        switch self {
        case .null: break
        case .integer(let value): try container.encode(value, forKey: .integer)
        case .real(let value): try container.encode(value, forKey: .real)
        case .text(let value): try container.encode(value, forKey: .text)
        case .blob(let bytes): try container.encode(bytes.map { String(format: "%02x", $0) }.joined(), forKey: .blob)
        }
    }
}
