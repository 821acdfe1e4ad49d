import BatchRunStore
import Foundation

/// A Swift type a model's property may have: the column type it is stored as, and its
/// conversions. `Int`, `Int64`, `Int32`, `Double`, `Float`, `String`, `Bool`, `Date`, `Data`,
/// their optionals, and enums of such a raw value that declare the conformance.
///
/// ```swift
/// enum Status: String, ColumnValue { case scheduled, boarding, departed }
/// ```
public protocol ColumnValue: SendableMetatype {
    /// The type of the column it is stored in.
    static var columnType: ColumnType { get }
    /// Whether NULL is one of its values (an optional).
    static var acceptsNull: Bool { get }
    /// The value as stored.
    var storeValue: StoreValue { get }
    /// The value of a stored one; nil when it does not fit.
    ///
    /// ```swift
    /// let seats = Int(storeValue: .integer(180))   // 180; nil for .text("180")
    /// ```
    init?(storeValue: StoreValue)
}

extension ColumnValue {
    /// False: NULL is not one of its values (an optional's is true).
    public static var acceptsNull: Bool { false }
}

extension ColumnValue where Self: RawRepresentable, RawValue: ColumnValue {
    /// The raw value's column type (`text` for a `String` enum).
    public static var columnType: ColumnType { RawValue.columnType }
    /// The raw value, as stored.
    public var storeValue: StoreValue { rawValue.storeValue }
    /// The case whose raw value is stored; nil when no case has it.
    ///
    /// ```swift
    /// let status = Status(storeValue: .text("boarding"))   // .boarding
    /// ```
    public init?(storeValue: StoreValue) {
        guard let raw = RawValue(storeValue: storeValue) else { return nil }
        self.init(rawValue: raw)
    }
}

extension Optional: ColumnValue where Wrapped: ColumnValue {
    /// The wrapped type's column type.
    public static var columnType: ColumnType { Wrapped.columnType }
    /// True: nil is stored as NULL.
    public static var acceptsNull: Bool { true }
    /// The wrapped value as stored; NULL for nil.
    public var storeValue: StoreValue { self?.storeValue ?? .null }
    /// nil (`.some(nil)`) for NULL, else the wrapped type's value; fails when that does not fit.
    ///
    /// ```swift
    /// let delay = Double?(storeValue: .null)   // .some(nil): no delay
    /// ```
    public init?(storeValue: StoreValue) {
        if storeValue == .null {
            self = .none
            return
        }
        guard let wrapped = Wrapped(storeValue: storeValue) else { return nil }
        self = .some(wrapped)
    }
}

extension Int: ColumnValue {
    /// `integer`.
    public static var columnType: ColumnType { .integer }
    /// The number as an `integer`.
    public var storeValue: StoreValue { .integer(Int64(self)) }
    /// An `integer` that fits an `Int`; nil for any other value.
    ///
    /// ```swift
    /// let seats = Int(storeValue: .integer(180))   // 180
    /// ```
    public init?(storeValue: StoreValue) {
        guard case .integer(let value) = storeValue, let fitted = Int(exactly: value) else { return nil }
        self = fitted
    }
}

extension Int64: ColumnValue {
    /// `integer`.
    public static var columnType: ColumnType { .integer }
    /// The number as an `integer`.
    public var storeValue: StoreValue { .integer(self) }
    /// An `integer`; nil for any other value.
    ///
    /// ```swift
    /// let seats = Int64(storeValue: .integer(180))   // 180
    /// ```
    public init?(storeValue: StoreValue) {
        guard case .integer(let value) = storeValue else { return nil }
        self = value
    }
}

extension Int32: ColumnValue {
    /// `integer`.
    public static var columnType: ColumnType { .integer }
    /// The number as an `integer`.
    public var storeValue: StoreValue { .integer(Int64(self)) }
    /// An `integer` that fits an `Int32`; nil for any other value.
    ///
    /// ```swift
    /// let seats = Int32(storeValue: .integer(180))   // 180; nil for .integer(5_000_000_000)
    /// ```
    public init?(storeValue: StoreValue) {
        guard case .integer(let value) = storeValue, let fitted = Int32(exactly: value) else { return nil }
        self = fitted
    }
}

extension Double: ColumnValue {
    /// `real`.
    public static var columnType: ColumnType { .real }
    /// The number as a `real`.
    public var storeValue: StoreValue { .real(self) }
    /// A `real`, or an `integer` as a `Double`; nil for any other value.
    ///
    /// ```swift
    /// let delay = Double(storeValue: .integer(10))   // 10.0
    /// ```
    public init?(storeValue: StoreValue) {
        switch storeValue {
        case .real(let value): self = value
        case .integer(let value): self = Double(value)
        default: return nil
        }
    }
}

extension Float: ColumnValue {
    /// `real`.
    public static var columnType: ColumnType { .real }
    /// The number as a `real`.
    public var storeValue: StoreValue { .real(Double(self)) }
    /// A `real` or an `integer`, as a `Float`; nil for any other value.
    ///
    /// ```swift
    /// let delay = Float(storeValue: .real(12.5))   // 12.5
    /// ```
    public init?(storeValue: StoreValue) {
        guard let value = Double(storeValue: storeValue) else { return nil }
        self = Float(value)
    }
}

extension String: ColumnValue {
    /// `text`.
    public static var columnType: ColumnType { .text }
    /// The string as `text`.
    public var storeValue: StoreValue { .text(self) }
    /// A `text`; nil for any other value.
    ///
    /// ```swift
    /// let number = String(storeValue: .text("UA90"))   // "UA90"
    /// ```
    public init?(storeValue: StoreValue) {
        guard case .text(let value) = storeValue else { return nil }
        self = value
    }
}

extension Bool: ColumnValue {
    /// `boolean`: stored as 0 or 1.
    public static var columnType: ColumnType { .boolean }
    /// 1 for true, 0 for false.
    public var storeValue: StoreValue { StoreValue(self) }
    /// 0 or 1 (or the text `true` or `false`); nil for any other value.
    ///
    /// ```swift
    /// let cancelled = Bool(storeValue: .integer(0))   // false
    /// ```
    public init?(storeValue: StoreValue) {
        guard let value = storeValue.bool else { return nil }
        self = value
    }
}

extension Date: ColumnValue {
    /// `datetime`: stored as ISO 8601 text in UTC.
    public static var columnType: ColumnType { .datetime }
    /// The date as ISO 8601 text (`2026-01-31T12:00:00.000Z`).
    public var storeValue: StoreValue { StoreValue(self) }
    /// ISO 8601 text; nil for any other value.
    ///
    /// ```swift
    /// let departs = Date(storeValue: .text("2026-01-31T12:00:00.000Z"))
    /// ```
    public init?(storeValue: StoreValue) {
        guard let value = storeValue.date else { return nil }
        self = value
    }
}

extension Data: ColumnValue {
    /// `blob`.
    public static var columnType: ColumnType { .blob }
    /// The bytes as a `blob`.
    public var storeValue: StoreValue { StoreValue(self) }
    /// A `blob`; nil for any other value.
    ///
    /// ```swift
    /// let bytes = Data(storeValue: .blob([0xCA, 0xFE]))   // 2 bytes
    /// ```
    public init?(storeValue: StoreValue) {
        guard let value = storeValue.data else { return nil }
        self = value
    }
}
