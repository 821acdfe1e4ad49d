import BatchRunStore

/// What a context fetches as rows of values rather than objects: counts, aggregates and
/// groups, as a job file's `fetch` computes them. Reads a consistent snapshot.
///
/// ```swift
/// var request = RowRequest(entity: "Session", select: ["user": "user", "sessions": "count(*)",
///                                                     "average": "avg(duration)"])
/// request.groupBy = ["user"]
/// request.orderBy = [.descending("sessions")]
/// for row in try await main.fetch(request) {
///     print(row["user"]?.string ?? "", row["sessions"]?.int ?? 0)
/// }
/// ```
public struct RowRequest: Sendable, Hashable {
    /// One result column: a name and the expression that computes it.
    package struct Item: Sendable, Hashable {
        package var name: String
        package var expression: String
        package init(name: String, expression: String) {
            self.name = name
            self.expression = expression
        }
    }

    /// A result column to sort by.
    public struct Order: Sendable, Hashable {
        package var name: String
        package var descending: Bool
        package init(name: String, descending: Bool = false) {
            self.name = name
            self.descending = descending
        }
        public static func ascending(_ name: String) -> Order { Order(name: name) }
        public static func descending(_ name: String) -> Order { Order(name: name, descending: true) }
    }

    package var entity: String
    /// Nil selects every declared column.
    package var select: [Item]?
    package var whereClause: String?
    package var params: [String: StoreValue]
    public var groupBy: [String] = []
    public var orderBy: [Order] = []
    public var limit: Int?

    package init(entity: String, select: [Item]? = nil, where whereClause: String? = nil,
                params: [String: StoreValue] = [:], limit: Int? = nil) {
        self.entity = entity
        self.select = select
        self.whereClause = whereClause
        self.params = params
        self.limit = limit
    }

    /// Result columns named by a map of name to expression, in the names' order.
    public init(entity: String, select: KeyValuePairs<String, String>, where whereClause: String? = nil,
                params: [String: StoreValue] = [:]) {
        self.init(entity: entity, select: select.map { Item(name: $0.key, expression: $0.value) },
                  where: whereClause, params: params)
    }

    /// The result columns' names, given the entity (needed when `select` is nil).
    package func resultColumns(of entity: Entity) -> [String] {
        select?.map(\.name) ?? entity.columnNames
    }

    package func sql(for entity: Entity) -> String {
        let items = select.map { items in
            items.map { item in
                item.name == item.expression && entity.column(named: item.name) != nil
                    ? SQL.quote(item.name)
                    : "(\(item.expression)) AS \(SQL.quote(item.name))"
            }
        } ?? entity.columnNames.map(SQL.quote)
        var sql = "SELECT \(items.joined(separator: ", ")) FROM \(SQL.quote(entity.tableName))"
        if let whereClause { sql += " WHERE (\(whereClause))" }
        if !groupBy.isEmpty {
            // A column's name is the column, as in `select` (on PostgreSQL a bare `user` is the role).
            sql += " GROUP BY " + groupBy.map { entity.column(named: $0) != nil ? SQL.quote($0) : "(\($0))" }
                .joined(separator: ", ")
        }
        if !orderBy.isEmpty {
            sql += " ORDER BY " + orderBy.map { SQL.quote($0.name) + ($0.descending ? " DESC" : " ASC") }
                .joined(separator: ", ")
        }
        if let limit { sql += " LIMIT \(limit)" }
        return sql
    }
}

/// One row of a `RowRequest`'s result: values by result column.
public struct ResultRow: Sendable, Hashable {
    public let columns: [String]
    public let values: [StoreValue]

    package init(columns: [String], values: [StoreValue]) {
        self.columns = columns
        self.values = values
    }

    /// The value of a result column, nil when the request has no such column.
    public subscript(column: String) -> StoreValue? {
        columns.firstIndex(of: column).map { values[$0] }
    }
}
