import GRDB

/// The `CREATE TABLE` and `CREATE INDEX` statements for a model on SQLite: the declared types'
/// affinities (`ColumnType.sqlType`), and a one-column integer key as an alias of the rowid,
/// the fastest key SQLite has.
enum SchemaSQL {
    static let definition = TableDefinition(typeName: { $0.sqlType }, integerKey: "PRIMARY KEY")

    static func statements(for model: Model) -> [String] {
        definition.statements(for: model)
    }

    /// True when every table and index of the model exists (creating them would change nothing).
    static func isComplete(_ model: Model, in db: Database) throws -> Bool {
        for entity in model.entities {
            guard try db.tableExists(entity.tableName) else { return false }
            let existing = Set(try db.indexes(on: entity.tableName).map(\.name))
            for columns in entity.indexes where !existing.contains(TableDefinition.indexName(entity, columns)) { return false }
        }
        return true
    }
}
