/// The stored rows an import batch's keys collide with, read once per batch as typed cells
/// (no value made per cell), and found by key: integer keys through an array over their range,
/// others through a dictionary.
///
/// ```swift
/// let stored = try StoredRows.read(keys, of: entity, in: db)
/// if let row = stored.row(matching: batch, cell: keyCell) { ... stored.rows.cells(of: row) ... }
/// ```
struct StoredRows {
    /// The rows, every column of the entity in its order.
    private(set) var rows = RowBatch()
    /// The entity's key column among a row's cells.
    let keyColumn: Int
    /// By `key - lowest`: the row + 1, 0 for none (integer keys that fill their range).
    private var dense: [Int32] = []
    private var lowest: Int64 = 0
    /// Other keys.
    private var byKey: [StoreValue: Int] = [:]

    init(keyColumn: Int) {
        self.keyColumn = keyColumn
    }

    var isEmpty: Bool { rows.isEmpty }

    /// Reads the rows `statement` returns (with `positional` bound) and indexes them by key.
    mutating func read(_ statement: PreparedStatement, positional: [StoreValue], in db: any StoreConnection) throws {
        try db.readRows(statement, positional: positional, into: &rows)
    }

    /// Indexes the rows read by their keys; call once, after every read.
    mutating func index() {
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
    func row(matching batch: RowBatch, cell index: Int) -> Int? {
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
    func cell(_ column: Int, ofRow row: Int) -> Int {
        rows.cells(of: row).lowerBound + column
    }

    /// A stored row as values (the one-row paths).
    func values(ofRow row: Int) -> [StoreValue] {
        rows.cells(of: row).map { rows.value(at: $0) }
    }
}
