/// `batch-update`: sets columns from expressions on the rows matching `where`.
public struct BatchUpdateStep: Sendable, Hashable {
    public struct Assignment: Sendable, Hashable {
        public var column: String
        public var expression: String
        public init(column: String, expression: String) {
            self.column = column
            self.expression = expression
        }
    }

    public var entity: String
    public var whereClause: String?
    public var set: [Assignment]
    /// One set-based UPDATE that bypasses the contexts.
    public var direct = false
    public var params: [String: ParamTemplate] = [:]
    public var batchSize: Int?

    public init(entity: String, whereClause: String?, set: [Assignment]) {
        self.entity = entity
        self.whereClause = whereClause
        self.set = set
    }

    public func sql(for entity: Entity) -> String {
        let assignments = set.map { "\(SQL.quote($0.column)) = (\($0.expression))" }.joined(separator: ", ")
        return "UPDATE \(SQL.quote(entity.tableName)) SET \(assignments)" + (whereClause.map { " WHERE (\($0))" } ?? "")
    }
}
