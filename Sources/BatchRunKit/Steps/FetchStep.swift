/// `fetch`: reads rows of an entity from a consistent snapshot, to a file, the terminal or `as:` outputs.
public struct FetchStep: Sendable, Hashable {
    /// One result column: `alias: expression`, or a plain column (alias == expression).
    public struct Item: Sendable, Hashable {
        public var name: String
        public var expression: String
        public init(name: String, expression: String) {
            self.name = name
            self.expression = expression
        }
    }

    public struct Order: Sendable, Hashable {
        public var name: String
        public var descending: Bool
        public init(name: String, descending: Bool) {
            self.name = name
            self.descending = descending
        }
    }

    public enum Output: Sendable, Hashable {
        case csv(String), json(String), ndjson(String)
        /// `-`: an aligned table on standard output.
        case table
    }

    public var entity: String
    public var whereClause: String?
    /// Nil selects every declared column.
    public var select: [Item]?
    public var groupBy: [String] = []
    public var orderBy: [Order] = []
    public var limit: Int?
    public var output: Output?
    /// `as:` publishes the first row as `${NAME.COLUMN}`.
    public var publishAs: String?
    public var params: [String: ParamTemplate] = [:]
    public var batchSize: Int?

    public init(entity: String) {
        self.entity = entity
    }

    /// The result columns' names, given the entity (needed when `select` is omitted).
    public func resultColumns(of entity: Entity) -> [String] {
        select?.map(\.name) ?? entity.columnNames
    }

    public func sql(for entity: Entity) -> String {
        let items = select.map { items in
            items.map { item in
                item.name == item.expression && entity.column(named: item.name) != nil
                    ? SQL.quote(item.name)
                    : "(\(item.expression)) AS \(SQL.quote(item.name))"
            }
        } ?? entity.columnNames.map(SQL.quote)
        var sql = "SELECT \(items.joined(separator: ", ")) FROM \(SQL.quote(entity.tableName))"
        if let whereClause { sql += " WHERE (\(whereClause))" }
        if !groupBy.isEmpty { sql += " GROUP BY " + groupBy.map { "(\($0))" }.joined(separator: ", ") }
        if !orderBy.isEmpty {
            sql += " ORDER BY " + orderBy.map { SQL.quote($0.name) + ($0.descending ? " DESC" : " ASC") }
                .joined(separator: ", ")
        }
        if let limit { sql += " LIMIT \(limit)" }
        return sql
    }
}
