import GRDB

/// The `CREATE TABLE` and `CREATE INDEX` statements for a model.
enum SchemaSQL {
    static func createTable(_ entity: Entity) -> String {
        let singleIntegerKey = entity.primaryKey.count == 1
            && entity.column(named: entity.primaryKey[0])?.type == .integer
        var parts: [String] = entity.columns.map { column in
            var definition = "\(SQL.quote(column.name)) \(column.type.sqlType)"
            if singleIntegerKey && column.name == entity.primaryKey[0] {
                definition += " PRIMARY KEY"   // an alias of the rowid: the fastest key SQLite has
            } else if column.notNull || entity.primaryKey.contains(column.name) {
                definition += " NOT NULL"
            }
            if column.isUnique { definition += " UNIQUE" }
            if let literal = column.defaultLiteral { definition += " DEFAULT \(literal)" }
            return definition
        }
        if !singleIntegerKey { parts.append("PRIMARY KEY (\(SQL.quoteList(entity.primaryKey)))") }
        for unique in entity.uniques { parts.append("UNIQUE (\(SQL.quoteList(unique)))") }
        return "CREATE TABLE IF NOT EXISTS \(SQL.quote(entity.tableName)) (\n  "
            + parts.joined(separator: ",\n  ") + "\n)"
    }

    static func indexName(_ entity: Entity, _ columns: [String]) -> String {
        ([entity.tableName] + columns + ["idx"]).joined(separator: "_")
    }

    /// True when every table and index of the model exists (creating them would change nothing).
    static func isComplete(_ model: Model, in db: Database) throws -> Bool {
        for entity in model.entities {
            guard try db.tableExists(entity.tableName) else { return false }
            let existing = Set(try db.indexes(on: entity.tableName).map(\.name))
            for columns in entity.indexes where !existing.contains(indexName(entity, columns)) { return false }
        }
        return true
    }

    static func createIndexes(_ entity: Entity) -> [String] {
        entity.indexes.map { columns in
            let name = indexName(entity, columns)
            return "CREATE INDEX IF NOT EXISTS \(SQL.quote(name)) ON \(SQL.quote(entity.tableName)) (\(SQL.quoteList(columns)))"
        }
    }

    static func statements(for model: Model) -> [String] {
        model.entities.flatMap { [createTable($0)] + createIndexes($0) }
    }
}
