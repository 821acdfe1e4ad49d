@_spi(BatchRunPackage) import BatchRunStore

/// The stored rows an import batch's keys collide with, read once per batch as typed cells
/// (no value made per cell), and found by key: integer keys through an array over their range,
/// others through a dictionary.
///
/// ```swift
/// let stored = try StoredRows.lookUp(batch, keyPositions: StoredRows.keyPositions(in: columns, of: entity), of: entity, in: db)
/// if let row = stored.row(matching: batch, cell: keyCell) { ... stored.rows.cells(of: row) ... }
/// ```
package struct StoredRows: Sendable {
    /// The rows, every column of the entity in its order.
    package private(set) var rows = RowBatch()
    /// The entity's key column among a row's cells.
    let keyColumn: Int
    /// By `key - lowest`: the row + 1, 0 for none (integer keys that fill their range).
    private var dense: [Int32] = []
    private var lowest: Int64 = 0
    /// Other keys.
    private var byKey: [StoreValue: Int] = [:]

    package init(keyColumn: Int) {
        self.keyColumn = keyColumn
    }

    package var isEmpty: Bool { rows.isEmpty }

    /// Reads the rows `statement` returns (with `positional` bound) and indexes them by key.
    package mutating func read(_ statement: PreparedStatement, positional: [StoreValue], in db: any StoreConnection) throws {
        try db.readRows(statement, positional: positional, into: &rows)
    }

    /// Indexes the rows read by their keys; call once, after every read.
    package mutating func index() {
        var smallest = Int64.max, largest = Int64.min, allIntegers = true
        for row in 0..<rows.count {
            let cell = rows.cells[rows.cells(of: row).lowerBound + keyColumn]
            guard cell.kind == .integer else { allIntegers = false; break }
            smallest = min(smallest, cell.number)
            largest = max(largest, cell.number)
        }
        let (span, overflow) = largest.subtractingReportingOverflow(smallest)
        if allIntegers && !rows.isEmpty && !overflow && span < 4 * Int64(rows.count) + 64 {
            lowest = smallest
            dense = [Int32](repeating: 0, count: Int(span) + 1)
            for row in 0..<rows.count {
                dense[Int(rows.cells[rows.cells(of: row).lowerBound + keyColumn].number - smallest)] = Int32(row + 1)
            }
        } else {
            byKey.reserveCapacity(rows.count)
            for row in 0..<rows.count { byKey[rows.value(at: rows.cells(of: row).lowerBound + keyColumn)] = row }
        }
    }

    /// The stored row whose key equals cell `index` of `batch` (as `StoreValue`s compare).
    package func row(matching batch: RowBatch, cell index: Int) -> Int? {
        guard !rows.isEmpty else { return nil }
        if !dense.isEmpty {
            let cell = batch.cells[index]
            guard cell.kind == .integer else { return nil }
            let (offset, overflow) = cell.number.subtractingReportingOverflow(lowest)
            guard !overflow, offset >= 0, offset < Int64(dense.count) else { return nil }
            let found = dense[Int(offset)]
            return found == 0 ? nil : Int(found) - 1
        }
        return byKey[batch.value(at: index)]
    }

    /// Cell `column` of stored row `row`, as an index into `rows.cells`.
    package func cell(_ column: Int, ofRow row: Int) -> Int {
        rows.cells(of: row).lowerBound + column
    }

    /// A stored row as values (the one-row paths).
    package func values(ofRow row: Int) -> [StoreValue] {
        rows.cells(of: row).map { rows.value(at: $0) }
    }

    // MARK: Looking up a batch's rows

    /// Per layout (the columns its cells fill), the position of each primary-key column among its cells.
    package static func keyPositions(in layouts: [[Column]], of entity: Entity) -> [[Int?]] {
        layouts.map { columns in entity.primaryKey.map { key in columns.firstIndex { $0.name == key } } }
    }

    /// The rows that already hold the batch's primary keys (one-column keys only; other
    /// collisions are caught when the INSERT fails).
    package static func lookUp(_ batch: RowBatch, keyPositions: [[Int?]], of entity: Entity, in db: any StoreConnection) throws -> StoredRows {
        let none = StoredRows(keyColumn: entity.primaryKeyIndexes[0])
        guard entity.primaryKey.count == 1 else { return none }
        var keys: [StoreValue] = []
        keys.reserveCapacity(batch.count)
        for row in 0..<batch.count {
            guard let position = keyPositions[batch.layouts[row]][0] else { continue }
            let value = batch.value(at: batch.cells(of: row).lowerBound + position)
            if value != .null { keys.append(value) }
        }
        guard !keys.isEmpty else { return none }
        var lowest = Int64.max, highest = Int64.min, allIntegers = true
        for key in keys {
            guard case .integer(let key) = key else { allIntegers = false; break }
            (lowest, highest) = (min(lowest, key), max(highest, key))
        }
        if entity.hasRowidKey, allIntegers {
            // No row stored between the batch's lowest and highest key: none of its keys is taken,
            // and an append-only feed skips the lookup. Not `max(key)`, as it was: on PostgreSQL the
            // later batches of the same import, in flight on other sessions, have rows past it not
            // yet committed, which that scan stepped over one by one (a quarter more server time).
            let key = SQL.quote(entity.primaryKey[0])
            let any = try db.value("SELECT 1 FROM \(SQL.quote(entity.tableName)) WHERE \(key) BETWEEN ? AND ? LIMIT 1",
                                   [.integer(lowest), .integer(highest)])
            if any == nil { return none }
        }
        return try read(keys, of: entity, in: db)
    }

    /// The stored rows with these (one-column) primary keys: integer keys that fill half their
    /// range with one range scan (rows between them come too), others with one query per 1,000 keys.
    package static func read(_ keys: [StoreValue], of entity: Entity, in db: any StoreConnection) throws -> StoredRows {
        var found = StoredRows(keyColumn: entity.primaryKeyIndexes[0])
        let select = "SELECT \(SQL.quoteList(entity.columnNames)) FROM \(SQL.quote(entity.tableName)) WHERE \(SQL.quote(entity.primaryKey[0]))"
        if let (lowest, highest) = denseRange(of: keys) {
            // One range scan, not an IN list per 1,000 keys (a quarter of the lookup's time for
            // a re-import in key order); rows between the keys come too and are never asked for.
            try found.read(try db.prepare(select + " BETWEEN ? AND ?"), positional: [.integer(lowest), .integer(highest)], in: db)
        } else {
            for chunk in stride(from: 0, to: keys.count, by: 1000).map({ keys[$0..<min($0 + 1000, keys.count)] }) {
                let sql = select + " IN (" + Array(repeating: "?", count: chunk.count).joined(separator: ",") + ")"
                try found.read(try db.prepare(sql), positional: Array(chunk), in: db)
            }
        }
        found.index()
        return found
    }

    /// The lowest and highest of `keys` when all are integers and they fill at least half of
    /// the range between (a batch of a feed in key order); nil otherwise, or for a few keys.
    static func denseRange(of keys: [StoreValue]) -> (Int64, Int64)? {
        guard keys.count >= 64 else { return nil }
        var lowest = Int64.max, highest = Int64.min
        for key in keys {
            guard case .integer(let value) = key else { return nil }
            lowest = min(lowest, value)
            highest = max(highest, value)
        }
        let (span, overflow) = highest.subtractingReportingOverflow(lowest)
        return !overflow && span < 2 * Int64(keys.count) ? (lowest, highest) : nil
    }

    /// The range of the batch's keys when every row gives an integer key; nil otherwise (a row
    /// whose key the store assigns may take any key above the largest).
    static func keySpan(of batch: RowBatch, keyPositions: [[Int?]]) -> ClosedRange<Int64>? {
        guard !batch.isEmpty else { return nil }
        var lowest = Int64.max, highest = Int64.min
        for row in 0..<batch.count {
            guard let position = keyPositions[batch.layouts[row]][0] else { return nil }
            let cell = batch.cells[batch.cells(of: row).lowerBound + position]
            guard cell.kind == .integer else { return nil }
            lowest = min(lowest, cell.number)
            highest = max(highest, cell.number)
        }
        return lowest...highest
    }
}
