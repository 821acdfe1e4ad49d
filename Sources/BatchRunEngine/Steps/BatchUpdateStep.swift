import BatchRunStore

/// `batch-update`: sets columns from expressions on the rows matching `where`.
package struct BatchUpdateStep: Sendable, Hashable {
    package struct Assignment: Sendable, Hashable {
        package var column: String
        package var expression: String
        package init(column: String, expression: String) {
            self.column = column
            self.expression = expression
        }
    }

    package var entity: String
    package var whereClause: String?
    package var set: [Assignment]
    /// One set-based UPDATE that bypasses the contexts.
    package var direct = false
    package var params: [String: ParamTemplate] = [:]
    package var batchSize: Int?

    package init(entity: String, whereClause: String?, set: [Assignment]) {
        self.entity = entity
        self.whereClause = whereClause
        self.set = set
    }

    package func sql(for entity: Entity) -> String {
        let assignments = set.map { "\(SQL.quote($0.column)) = (\($0.expression))" }.joined(separator: ", ")
        return "UPDATE \(SQL.quote(entity.tableName)) SET \(assignments)" + (whereClause.map { " WHERE (\($0))" } ?? "")
    }
}
