/// `BulkLoader` for PostgreSQL, with multi-row statements: `INSERT ... VALUES` (keys the
/// server assigns come back with `RETURNING`), `ON CONFLICT DO UPDATE` for taken keys, and a
/// delete then insert for overwrite. Each call runs in a savepoint (`StoreConnection.run`), so
/// a refused row leaves the transaction usable for the row-by-row path.
///
/// ```swift
/// let loader = PostgresBulkLoader(entity: entity)
/// let (outcome, keys) = try loader.insert(0..<500, of: batch, layout: 0, columns: names, assigningKeys: true, in: connection)
/// ```
final class PostgresBulkLoader: BulkLoader {
    let entity: Entity
    private var statements: [String: PreparedStatement] = [:]
    private var connection: ObjectIdentifier?

    /// Rows per statement: the server parses each statement, and past a thousand rows that
    /// gains nothing.
    static let maximumRows = 1000

    init(entity: Entity) {
        self.entity = entity
    }

    func nextChunk(_ remaining: Int, columns: Int) -> Int {
        min(remaining, Self.maximumRows, max(1, 65_535 / max(columns, 1)))
    }

    func insert(_ rows: some Collection<Int>, of batch: RowBatch, layout: Int, columns: [String], assigningKeys: Bool,
                in connection: any StoreConnection) throws -> (outcome: StatementOutcome, keys: [Int64]) {
        let keyList = SQL.quoteList(entity.primaryKey)
        var keys: [Int64] = []
        let sql = "INSERT INTO \(SQL.quote(entity.tableName)) (\(SQL.quoteList(columns))) VALUES "
            + Array(repeating: tuple(columns), count: rows.count).joined(separator: ", ")
            + (assigningKeys ? " RETURNING \(keyList)" : "")
        let outcome = try connection.run(try statement(sql, in: connection), rows: rows, of: batch, returned: assigningKeys ? { row in
            if case .integer(let key) = row[0] { keys.append(key) }
        } : nil)
        return (outcome, keys)
    }

    func resolve(_ rows: [Int], keys: [StoreValue], of batch: RowBatch, layout: Int, columns: [String],
                 as resolution: BulkResolution, in connection: any StoreConnection) throws -> StatementOutcome {
        let table = SQL.quote(entity.tableName), keyList = SQL.quoteList(entity.primaryKey)
        let others = columns.filter { !entity.primaryKey.contains($0) }.map(SQL.quote)
        let values = Array(repeating: "(" + Array(repeating: "?", count: columns.count).joined(separator: ", ") + ")", count: rows.count)
            .joined(separator: ", ")
        let insert = "INSERT INTO \(table) (\(SQL.quoteList(columns))) VALUES \(values)"
        let sql: String
        switch resolution {
        case .ours:
            sql = insert + " ON CONFLICT (\(keyList)) DO UPDATE SET " + others.map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
        case .fillNulls:
            sql = insert + " ON CONFLICT (\(keyList)) DO UPDATE SET "
                + others.map { "\($0) = coalesce(\(table).\($0), excluded.\($0))" }.joined(separator: ", ")
        case .replace:
            let delete = "DELETE FROM \(table) WHERE \(keyList) IN (" + Array(repeating: "?", count: rows.count).joined(separator: ", ") + ")"
            let deleted = try connection.run(try statement(delete, in: connection), values: keys, returned: nil)
            guard case .done = deleted else { return deleted }
            sql = insert
        }
        return try connection.run(try statement(sql, in: connection), rows: rows, of: batch, returned: nil)
    }

    /// A row's placeholders; a NULL for a NOT NULL column with a default takes the default, and
    /// a NULL integer key the next identity value.
    private func tuple(_ columns: [String]) -> String {
        "(" + columns.map { name -> String in
            if entity.hasRowidKey && name == entity.primaryKey[0] {
                return "coalesce(?, nextval(pg_get_serial_sequence('\(SQL.quote(entity.tableName).replacingOccurrences(of: "'", with: "''"))', '\(name.replacingOccurrences(of: "'", with: "''"))')))"
            }
            if let column = entity.column(named: name), column.notNull, let literal = column.defaultLiteral {
                return "coalesce(?, \(literal))"
            }
            return "?"
        }.joined(separator: ", ") + ")"
    }

    private func statement(_ sql: String, in connection: any StoreConnection) throws -> PreparedStatement {
        if connection.identity != self.connection {
            statements = [:]
            self.connection = connection.identity
        }
        if let statement = statements[sql] { return statement }
        let statement = try connection.prepare(sql)
        statements[sql] = statement
        return statement
    }
}
