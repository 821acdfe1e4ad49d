/// One column of an entity: `duration: real not null default 0`.
public struct Column: Sendable, Hashable {
    public var name: String
    public var type: ColumnType
    public var isPrimaryKey: Bool
    public var notNull: Bool
    public var isUnique: Bool
    /// The column's earlier name (`full_name: text was name`): a table that has `renamedFrom`
    /// and not `name` has the column renamed, with its data, before any job starts.
    package var renamedFrom: String?
    /// The SQL literal after `default`, already checked to be a literal. A boolean column's
    /// `0` and `1` are kept as `FALSE` and `TRUE`, which every database reads as a boolean.
    public var defaultLiteral: String? {
        get { literal }
        set { literal = Self.portable(newValue, for: type) }
    }
    private var literal: String?

    public init(name: String, type: ColumnType, isPrimaryKey: Bool = false, notNull: Bool = false,
                isUnique: Bool = false, defaultLiteral: String? = nil) {
        self.name = name
        self.type = type
        self.isPrimaryKey = isPrimaryKey
        self.notNull = notNull
        self.isUnique = isUnique
        literal = Self.portable(defaultLiteral, for: type)
    }

    private static func portable(_ literal: String?, for type: ColumnType) -> String? {
        guard type == .boolean, let literal else { return literal }
        switch literal {
        case "0": return "FALSE"
        case "1": return "TRUE"
        default: return literal
        }
    }
}
