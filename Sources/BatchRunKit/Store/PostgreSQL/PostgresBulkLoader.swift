#if PostgreSQL
/// `BulkLoader` for PostgreSQL: rows go in with `COPY ... FROM STDIN` (keys the server is to
/// assign are drawn from the key's sequence first, one query for the whole call, or drawn while
/// the batch before loaded: `PostgresKeyReserve`), else with
/// multi-row `INSERT ... VALUES` (a NULL that takes a column's default, keys given for some
/// rows and not others); taken keys are resolved with `ON CONFLICT DO UPDATE`, or a delete then
/// insert for overwrite. Each call runs in a savepoint, so a refused row leaves the transaction
/// usable for the row-by-row path.
///
/// ```swift
/// let loader = PostgresBulkLoader(entity: entity)
/// let (outcome, keys) = try loader.insert(0..<500, of: batch, layout: 0, columns: names, assigningKeys: true, in: connection)
/// ```
final class PostgresBulkLoader: BulkLoader {
    let entity: Entity
    private var statements: [String: PreparedStatement] = [:]
    private var connection: ObjectIdentifier?
    /// Keys from the integer key's identity sequence, once it is looked up.
    private var keys: PostgresKeyReserve?
    /// Where keys are drawn ahead; nil: never.
    private let sideSession: PostgresKeyReserve.SideSession?
    /// Rows the batch after this one brings, when known.
    private var expected: Int?

    /// Rows per INSERT statement: the server parses each statement, and past a thousand rows
    /// that gains nothing.
    static let maximumRows = 1000
    /// Rows per call: one COPY takes a whole batch.
    static let maximumCopyRows = 10_000

    init(entity: Entity, sideSession: PostgresKeyReserve.SideSession? = nil) {
        self.entity = entity
        self.sideSession = sideSession
    }

    func nextChunk(_ remaining: Int, columns: Int) -> Int {
        min(remaining, Self.maximumCopyRows)
    }

    func insert(_ rows: ArraySlice<Int>, of batch: RowBatch, layout: Int, columns: [String], assigningKeys: Bool,
                in connection: any StoreConnection) throws -> (outcome: StatementOutcome, keys: [Int64]) {
        // Not COPY: PostgresNIO (1.33) stops the process with a precondition failure when the
        // server ends a session during a COPY (a restart, pg_terminate_backend), which no check
        // on our side can rule out; multi-row INSERTs fail as errors, and the batch is retried.
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

    /// True when a row gives NULL for a NOT NULL column with a default: COPY would store the
    /// NULL (and be refused); the INSERT statement takes the default.
    private func takesDefaults(_ rows: ArraySlice<Int>, of batch: RowBatch, columns: [String]) -> Bool {
        let positions = columns.indices.filter { index in
            entity.column(named: columns[index]).map { $0.notNull && $0.defaultLiteral != nil } ?? false
        }
        guard !positions.isEmpty else { return false }
        return rows.contains { row in
            let start = batch.cells(of: row).lowerBound
            return positions.contains { batch.cells[start + $0].kind == .null }
        }
    }

    /// `count` keys from the integer key's identity sequence (looked up once: finding it for
    /// every row costs ten times drawing the value); keys for the rows expected next are drawn
    /// meanwhile on another session.
    private func drawKeys(_ count: Int, in connection: any StoreConnection) throws -> [Int64] {
        let keys = try self.keys ?? reserveKeys(in: connection)
        self.keys = keys
        let drawn = try keys.take(count, in: connection)
        if let expected {
            keys.prepare(expected)
            self.expected = nil
        }
        return drawn
    }

    private func reserveKeys(in connection: any StoreConnection) throws -> PostgresKeyReserve {
        guard let sequence = try connection.value("SELECT \(PostgresSchemaSQL.keySequence(of: entity))")?.string else {
            throw StoreError.cannotOpen(path: entity.tableName, reason: "its key has no identity sequence")
        }
        return PostgresKeyReserve(sequence: sequence, side: sideSession)
    }

    func expectNext(rows: Int) {
        expected = rows
    }

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
