import BatchRunStore

/// The `CREATE TABLE` and `CREATE INDEX` statements for a model on SQLite: the declared types'
/// affinities (`ColumnType.sqlType`), and a one-column integer key as an alias of the rowid,
/// the fastest key SQLite has.
enum SchemaSQL {
    package static let definition = TableDefinition(typeName: { $0.sqlType }, integerKey: "PRIMARY KEY")

    package static func statements(for model: Model) -> [String] {
        definition.statements(for: model)
    }
}
