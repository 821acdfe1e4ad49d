/// Statements prepared on one connection, by their text, for the length of one transaction.
///
/// ```swift
/// let statements = StatementCache()
/// let update = try statements.statement("UPDATE \"Session\" SET status = ? WHERE id = ?", in: connection)
/// ```
package final class StatementCache {
    private var statements: [String: PreparedStatement] = [:]

    package func statement(_ sql: String, in connection: any StoreConnection) throws -> PreparedStatement {
        if let statement = statements[sql] { return statement }
        let statement = try connection.prepare(sql)
        statements[sql] = statement
        return statement
    }

    package init() {
    }
}
