/// One column of an entity: `duration: real not null default 0`.
public struct Column: Sendable, Hashable {
    public var name: String
    public var type: ColumnType
    public var isPrimaryKey: Bool
    public var notNull: Bool
    public var isUnique: Bool
    /// The SQL literal after `default`, already checked to be a literal.
    public var defaultLiteral: String?

    public init(name: String, type: ColumnType, isPrimaryKey: Bool = false, notNull: Bool = false,
                isUnique: Bool = false, defaultLiteral: String? = nil) {
        self.name = name
        self.type = type
        self.isPrimaryKey = isPrimaryKey
        self.notNull = notNull
        self.isUnique = isUnique
        self.defaultLiteral = defaultLiteral
    }
}
