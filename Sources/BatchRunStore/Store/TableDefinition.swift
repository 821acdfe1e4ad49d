/// `CREATE TABLE` and `CREATE INDEX` statements for an entity, in the SQL both backends read;
/// each backend gives its type names and how a one-column integer key is declared.
///
/// ```swift
/// let ddl = TableDefinition(typeName: { $0.sqlType }, integerKey: "PRIMARY KEY")
/// let statements = ddl.statements(for: model)
/// ```
package struct TableDefinition: Sendable {
    /// A column type's name in the database.
    package let typeName: @Sendable (ColumnType) -> String
    /// What follows the type of a one-column integer key (SQLite: `PRIMARY KEY`, an alias of
    /// the rowid; PostgreSQL: an identity column).
    package let integerKey: String

    package func createTable(_ entity: Entity) -> String {
        var parts: [String] = entity.columns.map { column in
            var definition = "\(SQL.quote(column.name)) \(typeName(column.type))"
            if entity.hasRowidKey && column.name == entity.primaryKey[0] {
                definition += " \(integerKey)"
            } else if column.notNull || entity.primaryKey.contains(column.name) {
                definition += " NOT NULL"
            }
            if column.isUnique { definition += " UNIQUE" }
            if let literal = column.defaultLiteral { definition += " DEFAULT \(literal)" }
            return definition
        }
        if !entity.hasRowidKey { parts.append("PRIMARY KEY (\(SQL.quoteList(entity.primaryKey)))") }
        for unique in entity.uniques { parts.append("UNIQUE (\(SQL.quoteList(unique)))") }
        return "CREATE TABLE IF NOT EXISTS \(SQL.quote(entity.tableName)) (\n  " + parts.joined(separator: ",\n  ") + "\n)"
    }

    static func indexName(_ entity: Entity, _ columns: [String]) -> String {
        ([entity.tableName] + columns + ["idx"]).joined(separator: "_")
    }

    /// The name of a unique index made by a schema change (a unique declared after the table
    /// was created; `CREATE TABLE` makes the others as constraints).
    static func uniqueName(_ entity: Entity, _ columns: [String]) -> String {
        ([entity.tableName] + columns + ["key"]).joined(separator: "_")
    }

    // MARK: Schema changes (JOBFILE.md section 13)

    /// `ALTER TABLE ... ADD COLUMN` for a column that is neither a key nor unique (a unique is
    /// added as its own index).
    package func addColumn(_ column: Column, to entity: Entity) -> String {
        var definition = "\(SQL.quote(column.name)) \(typeName(column.type))"
        if column.notNull { definition += " NOT NULL" }
        if let literal = column.defaultLiteral { definition += " DEFAULT \(literal)" }
        return "ALTER TABLE \(SQL.quote(entity.tableName)) ADD COLUMN \(definition)"
    }

    func renameColumn(_ from: String, to: String, of entity: Entity) -> String {
        "ALTER TABLE \(SQL.quote(entity.tableName)) RENAME COLUMN \(SQL.quote(from)) TO \(SQL.quote(to))"
    }

    func createIndex(_ columns: [String], of entity: Entity, unique: Bool) -> String {
        let name = unique ? Self.uniqueName(entity, columns) : Self.indexName(entity, columns)
        return "CREATE \(unique ? "UNIQUE " : "")INDEX IF NOT EXISTS \(SQL.quote(name)) ON \(SQL.quote(entity.tableName)) (\(SQL.quoteList(columns)))"
    }

    func createIndexes(_ entity: Entity) -> [String] {
        entity.indexes.map { columns in
            "CREATE INDEX IF NOT EXISTS \(SQL.quote(Self.indexName(entity, columns))) ON \(SQL.quote(entity.tableName)) (\(SQL.quoteList(columns)))"
        }
    }

    package func statements(for model: Model) -> [String] {
        model.entities.flatMap { [createTable($0)] + createIndexes($0) }
    }

    package init(typeName: @escaping @Sendable (ColumnType) -> String, integerKey: String) {
        self.typeName = typeName
        self.integerKey = integerKey
    }
}
