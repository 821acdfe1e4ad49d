/// An entity of the model: one SQLite table.
///
/// ```swift
/// let session = Entity(name: "Session", columns: [
///     Column(name: "id", type: .integer, isPrimaryKey: true),
///     Column(name: "user", type: .text, notNull: true),
/// ], primaryKey: ["id"])
/// ```
public struct Entity: Sendable, Hashable {
    public var name: String
    public var tableName: String
    public var columns: [Column]
    public var primaryKey: [String]
    public var uniques: [[String]]
    public var indexes: [[String]]

    public init(name: String, table: String? = nil, columns: [Column], primaryKey: [String],
                uniques: [[String]] = [], indexes: [[String]] = []) {
        self.name = name
        self.tableName = table ?? name
        self.columns = columns
        self.primaryKey = primaryKey
        self.uniques = uniques
        self.indexes = indexes
    }

    public func column(named name: String) -> Column? {
        columns.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }
    }

    public var columnNames: [String] { columns.map(\.name) }
}
