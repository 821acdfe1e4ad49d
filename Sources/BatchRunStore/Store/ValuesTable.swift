/// How a database takes many rows of values as a table to join a statement to (a save's
/// checked update): its SQL, named `v` with columns `column1`, `column2`, ..., how many rows
/// one statement takes, and the statement's arguments from the rows' values.
///
/// ```swift
/// let table = connection.valuesTable(of: [.integer, .text], rows: 2)
/// // SQLite:     (VALUES (?, ?), (?, ?)) AS v
/// // PostgreSQL: unnest(CAST(? AS bigint[]), CAST(? AS text[])) AS v(column1, column2)
/// let arguments = table.arguments([1, "a", 2, "b"])   // PostgreSQL: ["{1,2}", "{\"a\",\"b\"}"]
/// ```
package struct ValuesTable {
    package let sql: String
    /// The statement's arguments from the values row after row.
    package let arguments: ([StoreValue]) -> [StoreValue]

    package init(sql: String, arguments: @escaping ([StoreValue]) -> [StoreValue]) {
        self.sql = sql
        self.arguments = arguments
    }
}
