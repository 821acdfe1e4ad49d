import Foundation

/// Converts one feed field, as bytes, to the typed cell its column stores, without making a
/// String for numbers: `nulls` first, then the column's type. Problems use the contract's
/// messages (`"abc" is not a real`).
final class CellConverter: Sendable {
    let type: ColumnType
    /// The column takes a NULL: it is nullable, has a default, or is SQLite's rowid.
    let acceptsNull: Bool
    let nulls: [[UInt8]]

    init(column: Column, isRowidKey: Bool, nulls: [String]) {
        self.type = column.type
        self.acceptsNull = !column.notNull || column.defaultLiteral != nil || isRowidKey
        self.nulls = nulls.map { Array($0.utf8) }
    }

    /// Appends the cell to `batch`, or returns why the field does not fit.
    func append(_ field: UnsafeBufferPointer<UInt8>, to batch: inout RowBatch) -> String? {
        if nulls.contains(where: { $0.elementsEqual(field) }) { return appendNull(to: &batch) }
        switch type {
        case .text:
            batch.appendText(field)
        case .blob:
            batch.appendBlob(field)
        case .integer:
            if let value = Self.integer(field) {
                batch.appendInteger(value)
            } else if let value = Self.real(field), value.rounded() == value, let exact = Int64(exactly: value) {
                batch.appendInteger(exact)
            } else {
                return "\"\(String(decoding: field, as: UTF8.self))\" is not an integer"
            }
        case .real:
            guard let value = Self.real(field) else { return "\"\(String(decoding: field, as: UTF8.self))\" is not a real" }
            batch.appendReal(value)
        case .boolean:
            switch String(decoding: field, as: UTF8.self).lowercased() {
            case "true", "1": batch.appendInteger(1)
            case "false", "0": batch.appendInteger(0)
            default: return "\"\(String(decoding: field, as: UTF8.self))\" is not a boolean (true, false, 1 or 0)"
            }
        case .datetime:
            guard ValueConverter.isISO8601(field) else {
                return "\"\(String(decoding: field, as: UTF8.self))\" is not an ISO 8601 datetime (like 2026-01-31 or 2026-01-31T08:15:00Z)"
            }
            batch.appendText(field)
        }
        return nil
    }

    /// Appends a typed value (from JSON or inline rows).
    func append(_ value: StoreValue, to batch: inout RowBatch) -> String? {
        if case .text(let text) = value, nulls.contains(where: { $0.elementsEqual(text.utf8) }) { return appendNull(to: &batch) }
        switch ValueConverter.convert(value, to: type) {
        case .success(.null): return appendNull(to: &batch)
        case .success(let converted): batch.append(converted)
        case .failure(let problem): return problem.message
        }
        return nil
    }

    private func appendNull(to batch: inout RowBatch) -> String? {
        guard acceptsNull else { return "missing value in a not null column" }
        batch.appendNull()
        return nil
    }

    /// A decimal integer with an optional sign, or nil (also on overflow).
    static func integer(_ field: UnsafeBufferPointer<UInt8>) -> Int64? {
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
    static func real(_ field: UnsafeBufferPointer<UInt8>) -> Double? {
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
}
