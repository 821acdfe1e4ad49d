import BatchRunStore
import GRDB

/// Schema changes on SQLite (JOBFILE.md section 13): the stored tables read with SQLite's
/// pragmas, types compared by SQLite's affinity rules, and `ALTER TABLE` as SQLite reads it.
/// Concurrent processes' changes are one at a time by SQLite's own write lock.
extension SQLiteBackend {
    package var tableDefinition: BatchRunStore.TableDefinition { SchemaSQL.definition }

    package func storedTables(named tables: [String], in connection: any StoreConnection) throws -> [String: StoredTable] {
        // Every connection this backend hands out is a SQLiteConnection.
        let db = unsafeDowncast(connection, to: SQLiteConnection.self).db
        // Another process may have changed the schema since this connection cached it.
        db.clearSchemaCache()
        var result: [String: StoredTable] = [:]
        for name in tables where try db.tableExists(name) {
            var table = StoredTable(name: name)
            table.columns = try db.columns(in: name).map { StoredTable.StoredColumn(name: $0.name, type: $0.type) }
            table.primaryKey = try db.primaryKey(name).columns
            table.indexes = try db.indexes(on: name).map { StoredTable.StoredIndex(columns: $0.columns, isUnique: $0.isUnique) }
            result[name] = table
        }
        return result
    }

    /// SQLite's affinity rules: a column holds a declared type's values as declared when its
    /// affinity keeps them (`VARCHAR(20)` holds text, `NUMERIC` numbers and dates); a column
    /// declared without a type holds anything as given.
    package func storedType(_ storedType: String, holds type: ColumnType) -> Bool {
        let affinity = Self.affinity(of: storedType)
        if storedType.trimmingCharacters(in: .whitespaces).isEmpty { return true }
        switch type {
        case .integer, .boolean: return affinity == "INTEGER" || affinity == "NUMERIC"
        case .real: return affinity == "REAL" || affinity == "NUMERIC"
        case .text: return affinity == "TEXT"
        case .blob: return affinity == "BLOB"
        case .datetime: return affinity == "TEXT" || affinity == "NUMERIC"
        }
    }

    /// The affinity SQLite gives a declared type (section 3.1 of SQLite's datatypes page).
    static func affinity(of declared: String) -> String {
        let type = declared.uppercased()
        if type.contains("INT") { return "INTEGER" }
        if type.contains("CHAR") || type.contains("CLOB") || type.contains("TEXT") { return "TEXT" }
        if type.contains("BLOB") || type.isEmpty { return "BLOB" }
        if type.contains("REAL") || type.contains("FLOA") || type.contains("DOUB") { return "REAL" }
        return "NUMERIC"
    }

    /// SQLite adds a column with a constant default (existing rows read it without the table
    /// being rewritten); it cannot give existing rows a CURRENT_TIMESTAMP default.
    package func addColumnStatement(_ column: BatchRunStore.Column, to entity: Entity, hasRows: Bool) -> Result<String, SchemaRefusal> {
        if hasRows, let literal = column.defaultLiteral, literal.uppercased().hasPrefix("CURRENT_") {
            return .failure(SchemaRefusal(message: "SQLite cannot give the rows already in \(entity.tableName) a \(literal) default; "
                + "use a constant default, or add the column yourself"))
        }
        return .success(SchemaSQL.definition.addColumn(column, to: entity))
    }

    /// SQLite's write lock, held by the transaction, already makes schema changes one at a time.
    package func lockSchema(in connection: any StoreConnection) throws {}
}
