#if PostgreSQL
import BatchRunStore

/// Schema changes on PostgreSQL (JOBFILE.md section 13): the stored tables read from the
/// catalog (`pg_attribute`, `pg_index`) in the current schema, types compared by family
/// (`varchar(20)` holds text, `integer` and `numeric` hold integers), and concurrent processes'
/// changes made one at a time under the advisory lock table creation takes.
extension PostgresBackend {
    package var tableDefinition: TableDefinition { PostgresSchemaSQL.definition }

    package func storedTables(named tables: [String], in connection: any StoreConnection) throws -> [String: StoredTable] {
        let names: StoreValue = .text(Self.textArray(tables))
        var result: [String: StoredTable] = [:]
        for row in try connection.rows("""
            SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_catalog.pg_class c
            LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
            WHERE c.relnamespace = current_schema()::regnamespace AND c.relname = ANY(?::text[]) AND c.relkind IN ('r', 'p')
            ORDER BY c.relname, a.attnum
            """, [names]) {
            guard let table = row[0].string else { continue }
            if result[table] == nil { result[table] = StoredTable(name: table) }
            if let column = row[1].string { result[table]?.columns.append(.init(name: column, type: row[2].string ?? "")) }
        }
        // Indexes on columns only (an index on an expression, or a partial one, serves no declared index).
        for row in try connection.rows("""
            SELECT c.relname, ix.indisunique, ix.indisprimary,
                   (SELECT string_agg(a.attname, ',' ORDER BY k.n) FROM unnest(ix.indkey::int2[]) WITH ORDINALITY AS k(attnum, n)
                    JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum)
            FROM pg_catalog.pg_index ix JOIN pg_catalog.pg_class c ON c.oid = ix.indrelid
            WHERE c.relnamespace = current_schema()::regnamespace AND c.relname = ANY(?::text[])
              AND ix.indexprs IS NULL AND ix.indpred IS NULL
            """, [names]) {
            guard let table = row[0].string, let list = row[3].string else { continue }
            let columns = list.split(separator: ",").map(String.init)
            if row[2].bool == true { result[table]?.primaryKey = columns }
            result[table]?.indexes.append(.init(columns: columns, isUnique: row[1].bool == true))
        }
        return result
    }

    /// Types by family: the declared type's own (`bigint` for integer) and those that hold its
    /// values as declared.
    package func storedType(_ storedType: String, holds type: ColumnType) -> Bool {
        let stored = storedType.lowercased()
        func any(_ prefixes: String...) -> Bool { prefixes.contains { stored.hasPrefix($0) } }
        switch type {
        case .integer: return any("bigint", "integer", "smallint", "numeric")
        case .real: return any("double precision", "real", "numeric")
        case .text: return any("text", "character", "varchar", "citext", "name")
        case .blob: return any("bytea")
        case .boolean: return any("boolean")
        case .datetime: return any("timestamp", "date")
        }
    }

    /// PostgreSQL adds any column: a default, even `CURRENT_TIMESTAMP`, is given to existing
    /// rows without rewriting the table.
    package func addColumnStatement(_ column: Column, to entity: Entity, hasRows: Bool) -> Result<String, SchemaRefusal> {
        .success(PostgresSchemaSQL.definition.addColumn(column, to: entity))
    }

    /// The advisory lock table creation takes (`PostgresStoreConnection.createTable`), for the
    /// rest of the transaction: a second process waits, then finds the changes made.
    package func lockSchema(in connection: any StoreConnection) throws {
        try connection.execute("SELECT pg_advisory_xact_lock(\(PostgresStoreConnection.ddlLock))")
    }

    /// A PostgreSQL array literal of `names`, each double-quoted with its quotes and backslashes escaped.
    private static func textArray(_ names: [String]) -> String {
        "{" + names.map { "\"" + $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\"" }
            .joined(separator: ",") + "}"
    }
}
#endif
