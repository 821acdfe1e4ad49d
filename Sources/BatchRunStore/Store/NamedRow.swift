/// A row read by column name (the run ledger's tables): `row["status"].string`.
///
/// ```swift
/// for row in try connection.namedRows("SELECT id, status FROM _batchrun_runs") { print(row["id"].int64, row["status"]) }
/// ```
package struct NamedRow {
    package let values: [StoreValue]
    /// Column name to position, shared by the rows of one statement.
    package let positions: [String: Int]

    /// The column's value; `.null` for a column the statement did not select.
    package subscript(_ column: String) -> StoreValue {
        positions[column].map { values[$0] } ?? .null
    }

    package init(values: [StoreValue], positions: [String: Int]) {
        self.values = values
        self.positions = positions
    }
}

extension StoreValue {
    /// An integer as `Int64`.
    package var int64: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }
}
