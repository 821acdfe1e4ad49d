import BatchRunStore
import Foundation

/// Converts feed and inline values to what a column stores, with the contract's messages:
/// `"abc" is not a real`.
///
/// ```swift
/// ValueConverter.convert(.text("12.5"), to: .real)     // .success(.real(12.5))
/// ValueConverter.convert(.text("yes"), to: .boolean)   // .failure("\"yes\" is not a boolean (true, false, 1 or 0)")
/// ```
package enum ValueConverter {
    package struct Problem: Error, Sendable, Equatable {
        package var message: String

        package init(message: String) {
            self.message = message
        }
    }

    package static func convert(_ value: StoreValue, to type: ColumnType) -> Result<StoreValue, Problem> {
        switch (value, type) {
        case (.null, _): return .success(.null)
        case (.text(let text), _): return convert(text: text, to: type)
        case (.integer, .integer), (.real, .real), (.blob, .blob): return .success(value)
        case (.integer(let int), .real): return .success(.real(Double(int)))
        case (.real(let double), .integer):
            if double.rounded() == double, let int = Int64(exactly: double) { return .success(.integer(int)) }
            return .failure(Problem(message: "\(double) is not an integer"))
        case (.integer(let int), .boolean):
            if int == 0 || int == 1 { return .success(value) }
            return .failure(Problem(message: "\(int) is not a boolean (true, false, 1 or 0)"))
        case (.integer, .text), (.real, .text): return .success(.text(value.description))
        case (.blob(let bytes), .text): return .success(.text(String(decoding: bytes, as: UTF8.self)))
        default:
            return .failure(Problem(message: "\(value) is not \(article(type)) \(type.rawValue)"))
        }
    }

    /// Text from a feed, parsed for the column's type.
    package static func convert(text: String, to type: ColumnType) -> Result<StoreValue, Problem> {
        var text = text
        return text.withUTF8 { field in
            switch parse(field, as: type) {
            case .integer(let value): return .success(.integer(value))
            case .real(let value): return .success(.real(value))
            case .asText: return .success(.text(String(decoding: field, as: UTF8.self)))
            case .asBlob: return .success(.blob(Array(field)))
            case .problem(let message): return .failure(Problem(message: message))
            }
        }
    }

    /// What a field's bytes are for a column type: the one set of rules for every feed format
    /// (CSV and TSV fields, JSON and NDJSON strings, inline rows).
    enum Parsed {
        case integer(Int64)
        case real(Double)
        /// The field as it is, stored as text.
        case asText
        /// The field as it is, stored as a blob.
        case asBlob
        case problem(String)
    }

    /// Parses a field for `type`: integers in decimal (a real with no fraction, `1e3` or `12.0`,
    /// is an integer too), reals as `strtod` reads them but without spaces, hex, `inf` or `nan`,
    /// booleans as `true`/`false`/`1`/`0` in any case, datetimes as ISO 8601.
    static func parse(_ field: UnsafeBufferPointer<UInt8>, as type: ColumnType) -> Parsed {
        switch type {
        case .text:
            return .asText
        case .blob:
            return .asBlob
        case .integer:
            if let value = integer(field) { return .integer(value) }
            if let value = real(field), value.rounded() == value, let exact = Int64(exactly: value) { return .integer(exact) }
            return .problem("\"\(String(decoding: field, as: UTF8.self))\" is not an integer")
        case .real:
            guard let value = real(field) else { return .problem("\"\(String(decoding: field, as: UTF8.self))\" is not a real") }
            return .real(value)
        case .boolean:
            if let value = BooleanText.value(of: field) { return .integer(value ? 1 : 0) }
            return .problem("\"\(String(decoding: field, as: UTF8.self))\" is not a boolean (true, false, 1 or 0)")
        case .datetime:
            guard isISO8601(field) else {
                return .problem("\"\(String(decoding: field, as: UTF8.self))\" is not an ISO 8601 datetime (like 2026-01-31 or 2026-01-31T08:15:00Z)")
            }
            return .asText
        }
    }

    /// A decimal integer with an optional sign, or nil (also on overflow).
    package static func integer(_ field: UnsafeBufferPointer<UInt8>) -> Int64? {
        var index = 0
        var negative = false
        if index < field.count && (field[index] == UInt8(ascii: "-") || field[index] == UInt8(ascii: "+")) {
            negative = field[index] == UInt8(ascii: "-")
            index += 1
        }
        guard index < field.count else { return nil }
        var value: Int64 = 0
        while index < field.count {
            let digit = field[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = negative ? times.subtractingReportingOverflow(Int64(digit)) : times.addingReportingOverflow(Int64(digit))
            if overflow1 || overflow2 { return nil }
            value = sum
            index += 1
        }
        return value
    }

    /// A finite decimal real (as `strtod` reads it, whole field), or nil.
    package static func real(_ field: UnsafeBufferPointer<UInt8>) -> Double? {
        if let value = plainDecimal(field) { return value }
        guard !field.isEmpty, field.count < 64 else {
            return field.isEmpty ? nil : Double(String(decoding: field, as: UTF8.self)).flatMap { $0.isFinite ? $0 : nil }
        }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: field.count + 1) { buffer in
            for index in 0..<field.count { buffer[index] = CChar(bitPattern: field[index]) }
            buffer[field.count] = 0
            // Reject what strtod would take but a feed should not: spaces, hex, inf, nan.
            let first = field[0]
            guard first == UInt8(ascii: "-") || first == UInt8(ascii: "+") || first == UInt8(ascii: ".") || (first &- 48) < 10,
                  !field.contains(UInt8(ascii: "x")), !field.contains(UInt8(ascii: "X")) else { return nil }
            var end: UnsafeMutablePointer<CChar>?
            let value = strtod(buffer.baseAddress!, &end)
            guard let end, end == buffer.baseAddress! + field.count, value.isFinite else { return nil }
            return value
        }
    }

    /// Powers of ten a double holds exactly: 1e0 to 1e22.
    private static let exactPowersOfTen: [Double] = (0...22).map { exponent in
        (0..<exponent).reduce(1.0) { power, _ in power * 10 }
    }

    /// `[+-]digits[.digits]` with at most 15 digits in all: the real `strtod` reads, without
    /// calling it (it was 7% of an import's client time). The digits as an integer are exact
    /// in a double (below 2^53), and so is 10^fraction digits (at most 1e22), so one IEEE division
    /// rounds once, to the nearest double, as `strtod` does (Clinger's fast path). Anything
    /// else (an exponent, more digits, no digit) is nil, for `strtod`.
    static func plainDecimal(_ field: UnsafeBufferPointer<UInt8>) -> Double? {
        var index = 0
        var negative = false
        if index < field.count && (field[index] == UInt8(ascii: "-") || field[index] == UInt8(ascii: "+")) {
            negative = field[index] == UInt8(ascii: "-")
            index += 1
        }
        var digits: Int64 = 0, count = 0, fraction = -1
        while index < field.count {
            let byte = field[index]
            if byte == UInt8(ascii: ".") {
                guard fraction < 0 else { return nil }
                fraction = 0
            } else {
                let digit = byte &- UInt8(ascii: "0")
                guard digit < 10, count < 15 else { return nil }
                digits = digits &* 10 &+ Int64(digit)
                count += 1
                if fraction >= 0 { fraction += 1 }
            }
            index += 1
        }
        guard count > 0 else { return nil }
        let magnitude = fraction > 0 ? Double(digits) / exactPowersOfTen[fraction] : Double(digits)
        return negative ? -magnitude : magnitude
    }

    private static func article(_ type: ColumnType) -> String {
        type == .integer ? "an" : "a"
    }

    /// `YYYY-MM-DD`, optionally `T` or space, `HH:MM[:SS[.fff]]`, optionally `Z` or `±HH:MM`.
    static func isISO8601(_ text: String) -> Bool { ISO8601Text.isValid(text) }

    static func isISO8601(_ b: UnsafeBufferPointer<UInt8>) -> Bool { ISO8601Text.isValid(b) }
}
