/// A row read by column name (the run ledger's tables): `row["status"].string`.
///
/// ```swift
/// for row in try connection.namedRows("SELECT id, status FROM _batchrun_runs") { print(row["id"].int64, row["status"]) }
/// ```
struct NamedRow {
    let values: [StoreValue]
    /// Column name to position, shared by the rows of one statement.
    let positions: [String: Int]

    /// The column's value; `.null` for a column the statement did not select.
    subscript(_ column: String) -> StoreValue {
        positions[column].map { values[$0] } ?? .null
    }
}

extension StoreValue {
    /// An integer as `Int64`.
    var int64: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }
}
