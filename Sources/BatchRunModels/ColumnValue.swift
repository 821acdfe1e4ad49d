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
    init?(storeValue: StoreValue)
}

extension ColumnValue {
    public static var acceptsNull: Bool { false }
}

extension ColumnValue where Self: RawRepresentable, RawValue: ColumnValue {
    public static var columnType: ColumnType { RawValue.columnType }
    public var storeValue: StoreValue { rawValue.storeValue }
    public init?(storeValue: StoreValue) {
        guard let raw = RawValue(storeValue: storeValue) else { return nil }
        self.init(rawValue: raw)
    }
}

extension Optional: ColumnValue where Wrapped: ColumnValue {
    public static var columnType: ColumnType { Wrapped.columnType }
    public static var acceptsNull: Bool { true }
    public var storeValue: StoreValue { self?.storeValue ?? .null }
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
    public static var columnType: ColumnType { .integer }
    public var storeValue: StoreValue { .integer(Int64(self)) }
    public init?(storeValue: StoreValue) {
        guard case .integer(let value) = storeValue, let fitted = Int(exactly: value) else { return nil }
        self = fitted
    }
}

extension Int64: ColumnValue {
    public static var columnType: ColumnType { .integer }
    public var storeValue: StoreValue { .integer(self) }
    public init?(storeValue: StoreValue) {
        guard case .integer(let value) = storeValue else { return nil }
        self = value
    }
}

extension Int32: ColumnValue {
    public static var columnType: ColumnType { .integer }
    public var storeValue: StoreValue { .integer(Int64(self)) }
    public init?(storeValue: StoreValue) {
        guard case .integer(let value) = storeValue, let fitted = Int32(exactly: value) else { return nil }
        self = fitted
    }
}

extension Double: ColumnValue {
    public static var columnType: ColumnType { .real }
    public var storeValue: StoreValue { .real(self) }
    public init?(storeValue: StoreValue) {
        switch storeValue {
        case .real(let value): self = value
        case .integer(let value): self = Double(value)
        default: return nil
        }
    }
}

extension Float: ColumnValue {
    public static var columnType: ColumnType { .real }
    public var storeValue: StoreValue { .real(Double(self)) }
    public init?(storeValue: StoreValue) {
        guard let value = Double(storeValue: storeValue) else { return nil }
        self = Float(value)
    }
}

extension String: ColumnValue {
    public static var columnType: ColumnType { .text }
    public var storeValue: StoreValue { .text(self) }
    public init?(storeValue: StoreValue) {
        guard case .text(let value) = storeValue else { return nil }
        self = value
    }
}

extension Bool: ColumnValue {
    public static var columnType: ColumnType { .boolean }
    public var storeValue: StoreValue { StoreValue(self) }
    public init?(storeValue: StoreValue) {
        guard let value = storeValue.bool else { return nil }
        self = value
    }
}

extension Date: ColumnValue {
    public static var columnType: ColumnType { .datetime }
    public var storeValue: StoreValue { StoreValue(self) }
    public init?(storeValue: StoreValue) {
        guard let value = storeValue.date else { return nil }
        self = value
    }
}

extension Data: ColumnValue {
    public static var columnType: ColumnType { .blob }
    public var storeValue: StoreValue { StoreValue(self) }
    public init?(storeValue: StoreValue) {
        guard let value = storeValue.data else { return nil }
        self = value
    }
}
