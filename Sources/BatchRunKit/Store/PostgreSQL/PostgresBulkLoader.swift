#if PostgreSQL
/// `BulkLoader` for PostgreSQL: rows go in with multi-row `INSERT ... VALUES` (a NULL that
/// takes a column's default, a NULL integer key the next identity value); taken keys are
/// resolved with `ON CONFLICT DO UPDATE`, or a delete then insert for overwrite. Each call
/// runs in a savepoint, so a refused row leaves the transaction usable for the row-by-row path.
/// Not COPY: PostgresNIO (1.33) stops the process with a precondition failure when the server
/// ends a session during a COPY (a restart, `pg_terminate_backend`), which no check on our side
/// can rule out; an INSERT fails as an error, and the batch is retried.
///
/// ```swift
/// let loader = PostgresBulkLoader(entity: entity)
/// let (outcome, keys) = try loader.insert(0..<500, of: batch, layout: 0, columns: names, assigningKeys: true, in: connection)
/// ```
final class PostgresBulkLoader: BulkLoader {
    let entity: Entity
    private var statements: [String: PreparedStatement] = [:]
    private var connection: ObjectIdentifier?

    /// Rows per INSERT statement: the server parses each statement, and past a thousand rows
    /// that gains nothing.
    static let maximumRows = 1000
    /// Rows per call: its statements go back together when one is refused.
    static let maximumCallRows = 10_000

    init(entity: Entity) {
        self.entity = entity
    }

    func nextChunk(_ remaining: Int, columns: Int) -> Int {
        min(remaining, Self.maximumCallRows)
    }

    func insert(_ rows: ArraySlice<Int>, of batch: RowBatch, layout: Int, columns: [String], assigningKeys: Bool,
                in connection: any StoreConnection) throws -> (outcome: StatementOutcome, keys: [Int64]) {
        // Rows the INSERT statements take: one statement or several, all or nothing.
        let rows = Array(rows)
        var keys: [Int64] = []
        let outcome = try allOrNothing(rows.count, columns: columns.count, in: connection) { part in
            let (outcome, assigned) = try insertStatement(rows[part], of: batch, columns: columns, assigningKeys: assigningKeys,
                                                          in: connection)
            keys += assigned
            return outcome
        }
        return (outcome, outcome.isDone ? keys : [])
    }

    /// `statement` over parts of `count` rows, each part as many rows as one statement of
    /// `columns` values takes; with more than one part, or `always`, in a savepoint that a refused
    /// part rolls back whole. The refused part's outcome, else `.done`.
    private func allOrNothing(_ count: Int, columns: Int, always: Bool = false, in connection: any StoreConnection,
                              _ statement: (Range<Int>) throws -> StatementOutcome) throws -> StatementOutcome {
        let perStatement = min(Self.maximumRows, max(1, 65_535 / max(columns, 1)))
        if count <= perStatement && !always { return try statement(0..<count) }
        var outcome = StatementOutcome.done
        do {
            try connection.inSavepoint {
                for start in stride(from: 0, to: count, by: perStatement) {
                    outcome = try statement(start..<min(start + perStatement, count))
                    if !outcome.isDone { throw BackOut() }
                }
            }
        } catch is BackOut {}
        return outcome
    }

    /// Thrown to roll several statements back to their savepoint.
    private struct BackOut: Error {}

    /// One multi-row `INSERT`.
    private func insertStatement(_ rows: ArraySlice<Int>, of batch: RowBatch, columns: [String], assigningKeys: Bool,
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
        // A replace's delete and insert go back together too.
        try allOrNothing(rows.count, columns: columns.count, always: resolution == .replace, in: connection) { part in
            try resolveStatement(Array(rows[part]), keys: Array(keys[part]), of: batch, columns: columns, as: resolution, in: connection)
        }
    }

    private func resolveStatement(_ rows: [Int], keys: [StoreValue], of batch: RowBatch, columns: [String],
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
        return try connection.run(try statement(sql, in: connection), rows: rows[...], of: batch, returned: nil)
    }

    /// A NULL integer key takes the next identity value.
    private var assignedKeyPlaceholder: String {
        "coalesce(?, nextval(\(PostgresSchemaSQL.keySequence(of: entity))))"
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
#endif
