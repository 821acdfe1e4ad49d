@_spi(BatchRunPackage) import BatchRunStore

/// Converts one feed field, as bytes, to the typed cell its column stores, without making a
/// String for numbers: the step's NULL spellings first, then the column's type, by
/// `ValueConverter`'s rules. Plain values only, so a layout's converters are read per cell
/// without reference counting.
package struct CellConverter: Sendable {
    package let type: ColumnType
    /// The column takes a NULL: it is nullable, has a default, or is SQLite's rowid.
    let acceptsNull: Bool

    package init(column: Column, isRowidKey: Bool) {
        self.type = column.type
        self.acceptsNull = !column.notNull || column.defaultLiteral != nil || isRowidKey
    }

    /// Appends the cell to `batch`, or returns why the field does not fit.
    package func append(_ field: UnsafeBufferPointer<UInt8>, nulls: NullMarkers, to batch: inout RowBatch) -> String? {
        if nulls.matches(field) { return appendNull(to: &batch) }
        switch ValueConverter.parse(field, as: type) {
        case .integer(let value): batch.appendInteger(value)
        case .real(let value): batch.appendReal(value)
        case .asText: batch.appendText(field)
        case .asBlob: batch.appendBlob(field)
        case .problem(let message): return message
        }
        return nil
    }

    /// Appends the `fields` of `row` to `batch` (the row begun), field `fields[i]` through
    /// `converters[i]`: a CSV or TSV row's cells, in this module so that the loop over them
    /// calls nothing in another. The first field that does not fit stops it: its position in
    /// `fields` and why (the row's cells so far are left for the caller to drop).
    ///
    /// ```swift
    /// batch.beginRow(line: row.line, layout: 0)
    /// if let (position, problem) = CellConverter.append(row, fields: [0, 2], converters: converters, nulls: nulls, to: &batch) {
    ///     batch.dropLastRow()
    /// }
    /// ```
    package static func append(_ row: RawRow, fields: [Int], converters: [CellConverter], nulls: NullMarkers,
                               to batch: inout RowBatch) -> (position: Int, problem: String)? {
        row.bytes.withUnsafeBufferPointer { bytes in
            converters.withUnsafeBufferPointer { converters in
                for (position, field) in fields.enumerated() {
                    let range = row.range(of: field)
                    if let problem = converters[position].append(UnsafeBufferPointer(rebasing: bytes[range]), nulls: nulls, to: &batch) {
                        return (position, problem)
                    }
                }
                return nil
            }
        }
    }

    /// Appends a typed value (from JSON or inline rows).
    package func append(_ value: StoreValue, nulls: NullMarkers, to batch: inout RowBatch) -> String? {
        if case .text(let text) = value, nulls.matches(text) { return appendNull(to: &batch) }
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
}
