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
        var keys: [Int64] = []
        let sql = InsertSQL.insert(entity, columns: columns, rows: rows.count, assignedKey: assignedKeyPlaceholder)
            + (assigningKeys ? " RETURNING \(SQL.quoteList(entity.primaryKey))" : "")
        let outcome = try connection.run(try statement(sql, in: connection), rows: rows, of: batch, returned: assigningKeys ? { row in
            if case .integer(let key) = row[0] { keys.append(key) }
        } : nil)
        return (outcome, keys)
    }

    func resolve(_ rows: [Int], keys: [StoreValue], of batch: RowBatch, layout: Int, columns: [String],
                 as resolution: BulkResolution, in connection: any StoreConnection) throws -> StatementOutcome {
        let sql: String
        switch resolution {
        case .ours, .fillNulls:
            sql = InsertSQL.upsert(entity, columns: columns, rows: rows.count, resolution)
        case .replace:
            let delete = "DELETE FROM \(SQL.quote(entity.tableName)) WHERE \(SQL.quoteList(entity.primaryKey)) IN ("
                + Array(repeating: "?", count: rows.count).joined(separator: ", ") + ")"
            let deleted = try connection.run(try statement(delete, in: connection), values: keys, returned: nil)
            guard case .done = deleted else { return deleted }
            sql = InsertSQL.insert(entity, columns: columns, rows: rows.count)
        }
        return try connection.run(try statement(sql, in: connection), rows: rows, of: batch, returned: nil)
    }

    /// A NULL integer key takes the next identity value.
    private var assignedKeyPlaceholder: String {
        let literal = { (text: String) in "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }
        return "coalesce(?, nextval(pg_get_serial_sequence(\(literal(SQL.quote(entity.tableName))), \(literal(entity.primaryKey[0])))))"
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
