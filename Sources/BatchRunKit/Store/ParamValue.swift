/// A value bound to a `:name` placeholder or published by a fetch's `as:`.
///
/// Plain YAML scalars and `--param NAME=VALUE` are typed by YAML's core schema:
/// `ParamValue(plainScalar: "42")` is `.integer(42)`, `"2026-01-01"` stays `.text`.
public enum ParamValue: Sendable, Hashable, CustomStringConvertible {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    public init(plainScalar text: String) {
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

extension ParamValue {
    /// SQLite's sort order: NULL, then numbers, then text, then blobs.
    public static func sortsBefore(_ lhs: ParamValue, _ rhs: ParamValue) -> Bool {
        func rank(_ value: ParamValue) -> Int {
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
    public static func sortsBefore(_ lhs: [ParamValue], _ rhs: [ParamValue]) -> Bool {
        for (a, b) in zip(lhs, rhs) where a != b { return sortsBefore(a, b) }
        return lhs.count < rhs.count
    }
}
