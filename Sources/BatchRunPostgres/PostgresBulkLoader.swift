#if PostgreSQL
@_spi(BatchRunPackage) import BatchRunStore

/// `BulkLoader` for PostgreSQL: a call's rows go in with `COPY ... FROM STDIN` (keys the server
/// is to assign are drawn from the key's sequence first, one query for the whole call, or drawn
/// while the batch before loaded: `PostgresKeyReserve`); rows that need a column's default for a
/// NULL, or give keys for some rows and not others, go in with one `INSERT ... SELECT ... FROM
/// unnest(...)` whose parameters are one array per column (a NULL that takes a column's default,
/// a NULL integer key the next identity value). Taken keys are resolved with `ON CONFLICT DO
/// UPDATE`, or a delete then insert for overwrite. Each call runs in a savepoint, so a refused
/// row leaves the transaction usable for the row-by-row path.
/// A COPY that meets a server ending the session is made safe by `PostgresCopyRun`.
/// Not a multi-row `INSERT ... VALUES` with a parameter per value: the server plans such a
/// statement afresh at each run, and 1,000 rows of 19 columns took 45 ms to plan against 2.5 ms
/// for the arrays' statement, which was 15 times COPY's time for an import.
///
/// ```swift
/// let loader = PostgresBulkLoader(entity: entity)
/// let (outcome, keys) = try loader.insert(0..<500, of: batch, layout: 0, columns: names, assigningKeys: true, in: connection)
/// ```
package final class PostgresBulkLoader: BulkLoader {
    package let entity: Entity
    private var statements: [String: PreparedStatement] = [:]
    private var connection: ObjectIdentifier?
    /// Keys from the integer key's identity sequence, once it is looked up.
    private var keys: PostgresKeyReserve?
    /// Where keys are drawn ahead; nil: never.
    private let sideSession: PostgresKeyReserve.SideSession?
    /// Rows the batch after this one brings, when known.
    private var expected: Int?
    /// Keys given for the batch (`useKeys`); nil: drawn as the batch goes.
    private var givenKeys: ArraySlice<Int64>?

    /// Rows per call, and per statement: one COPY takes a whole batch; the arrays' text grows
    /// with them, the statement's not.
    static let maximumCallRows = 10_000

    package init(entity: Entity, sideSession: PostgresKeyReserve.SideSession? = nil) {
        self.entity = entity
        self.sideSession = sideSession
    }

    package func nextChunk(_ remaining: Int, columns: Int) -> Int {
        min(remaining, Self.maximumCallRows)
    }

    package func insert(_ rows: ArraySlice<Int>, of batch: RowBatch, layout: Int, columns: [String], assigningKeys: Bool,
                in connection: any StoreConnection) throws -> (outcome: StatementOutcome, keys: [Int64]) {
        if rows.count > 1, let copier = connection as? PostgresStoreConnection, copier.copies,
           !takesDefaults(rows, of: batch, columns: columns) {
            if !assigningKeys {
                return (try copier.copy(into: entity.tableName, columns: columns, rows: rows, of: batch), [])
            }
            if !columns.contains(entity.primaryKey[0]) {
                let keys = try drawKeys(rows.count, in: connection)
                let outcome = try copier.copy(into: entity.tableName, columns: columns + [entity.primaryKey[0]], rows: rows, of: batch,
                                              extra: keys)
                return (outcome, outcome.isDone ? keys : [])
            }
        }
        // The statement would leave the keys to the server's sequence, out of the given keys' order.
        if assigningKeys && givenKeys != nil { throw KeysNotGiven() }
        // Rows the INSERT statements take: one statement or several, all or nothing.
        let rows = Array(rows)
        var keys: [Int64] = []
        let outcome = try allOrNothing(rows.count, columns: columns.count, in: connection) { part in
            try insertStatement(rows[part], of: batch, columns: columns, returning: assigningKeys ? entity.primaryKey : nil,
                                in: connection, returned: assigningKeys ? { row in
                if case .integer(let key) = row[0] { keys.append(key) }
            } : nil)
        }
        return (outcome, outcome.isDone ? keys : [])
    }

    /// Always the `INSERT` statement (COPY gives nothing back), `RETURNING` every column.
    package func insertReturningRows(_ rows: ArraySlice<Int>, of batch: RowBatch, layout: Int, columns: [String],
                                     in connection: any StoreConnection, returned: ([StoreValue]) -> Void) throws -> StatementOutcome {
        let rows = Array(rows)
        var stored: [[StoreValue]] = []
        let outcome = try allOrNothing(rows.count, columns: columns.count, in: connection) { part in
            try insertStatement(rows[part], of: batch, columns: columns, returning: entity.columnNames, in: connection,
                                returned: { stored.append($0) })
        }
        if outcome.isDone { stored.forEach(returned) }
        return outcome
    }

    /// `statement` over parts of `count` rows, each part as many rows as one statement of
    /// `columns` values takes; with more than one part, or `always`, in a savepoint that a refused
    /// part rolls back whole. The refused part's outcome, else `.done`.
    private func allOrNothing(_ count: Int, columns: Int, always: Bool = false, in connection: any StoreConnection,
                              _ statement: (Range<Int>) throws -> StatementOutcome) throws -> StatementOutcome {
        let perStatement = Self.maximumCallRows
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
        if let given = givenKeys {
            guard given.count >= count else { throw KeysNotGiven() }
            givenKeys = given.dropFirst(count)
            return Array(given.prefix(count))
        }
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
        guard let sequence = try PostgresKeyReserve.rows("SELECT \(PostgresSchemaSQL.keySequence(of: entity))", [], on: connection)
            .first?.first?.string else {
            throw StoreError.cannotOpen(path: entity.tableName, reason: "its key has no identity sequence")
        }
        return PostgresKeyReserve(sequence: sequence, side: sideSession)
    }

    /// On the side session (a reader's, outside any transaction), after any drawn ahead; the
    /// next batch's (`expectNext`) are drawn meanwhile, on another.
    package func drawKeys(_ count: Int) throws -> [Int64] {
        guard let sideSession else { throw KeysNotGiven() }
        var drawn: [Int64] = []
        try sideSession { connection in
            let keys = try self.keys ?? reserveKeys(in: connection)
            self.keys = keys
            drawn = try keys.take(count, in: connection)
        }
        // The next batch's keys, drawn meanwhile on another session.
        if let expected {
            keys?.prepare(expected)
            self.expected = nil
        }
        return drawn
    }

    package func useKeys(_ keys: [Int64]?) {
        givenKeys = keys.map { $0[...] }
    }

    package func expectNext(rows: Int) {
        expected = rows
    }

    /// One `INSERT ... SELECT ... FROM unnest(...)` of all `rows`, each row's `returning`
    /// columns (none when nil) handed to `returned`.
    private func insertStatement(_ rows: ArraySlice<Int>, of batch: RowBatch, columns: [String], returning: [String]?,
                                 in connection: any StoreConnection, returned: (([StoreValue]) -> Void)?) throws -> StatementOutcome {
        let table = valuesTable(columns, in: connection)
        let sql = "INSERT INTO \(SQL.quote(entity.tableName)) (\(SQL.quoteList(columns))) SELECT "
            + selectList(columns) + " FROM " + table.sql + (returning.map { " RETURNING \(SQL.quoteList($0))" } ?? "")
        return try connection.run(try statement(sql, in: connection), values: table.arguments(values(rows, of: batch)),
                                  returned: returned)
    }

    /// The rows' values, row after row.
    private func values(_ rows: some Collection<Int>, of batch: RowBatch) -> [StoreValue] {
        var values: [StoreValue] = []
        for row in rows {
            for cell in batch.cells(of: row) { values.append(batch.value(at: cell)) }
        }
        return values
    }

    /// `unnest` of one array per column, each cast to its column's type, named `v(column1, ...)`.
    private func valuesTable(_ columns: [String], in connection: any StoreConnection) -> ValuesTable {
        connection.valuesTable(of: columns.map { entity.column(named: $0)?.type ?? .text }, rows: Self.maximumCallRows)
    }

    /// `v.column1, ...`: a NULL takes the column's default where it is NOT NULL and has one,
    /// and a NULL integer key the next identity value.
    private func selectList(_ columns: [String]) -> String {
        columns.enumerated().map { offset, name -> String in
            let value = "v.column\(offset + 1)"
            if entity.hasRowidKey, name == entity.primaryKey[0] {
                return "coalesce(\(value), nextval(\(PostgresSchemaSQL.keySequence(of: entity))))"
            }
            if let column = entity.column(named: name), column.notNull, let literal = column.defaultLiteral {
                return "coalesce(\(value), \(literal))"
            }
            return value
        }.joined(separator: ", ")
    }

    package func resolve(_ rows: [Int], keys: [StoreValue], of batch: RowBatch, layout: Int, columns: [String],
                 as resolution: BulkResolution, in connection: any StoreConnection) throws -> StatementOutcome {
        // A replace's delete and insert go back together too.
        try allOrNothing(rows.count, columns: columns.count, always: resolution == .replace, in: connection) { part in
            try resolveStatement(Array(rows[part]), keys: Array(keys[part]), of: batch, columns: columns, as: resolution, in: connection)
        }
    }

    private func resolveStatement(_ rows: [Int], keys: [StoreValue], of batch: RowBatch, columns: [String],
                                  as resolution: BulkResolution, in connection: any StoreConnection) throws -> StatementOutcome {
        let tableName = SQL.quote(entity.tableName)
        let table = valuesTable(columns, in: connection)
        let insert = "INSERT INTO \(tableName) (\(SQL.quoteList(columns))) SELECT "
        let sql: String
        switch resolution {
        case .ours, .fillNulls:
            // A NULL for a NOT NULL column with a default takes it here too (the update writes
            // `excluded`'s value); the rows' keys are given, so no identity value is drawn.
            sql = insert + selectList(columns) + " FROM " + table.sql + InsertSQL.onConflict(entity, columns: columns, resolution)
        case .replace:
            let key = entity.column(named: entity.primaryKey[0])?.type ?? .integer
            let delete = "DELETE FROM \(tableName) WHERE \(SQL.quote(entity.primaryKey[0])) = ANY(CAST(? AS \(PostgresSchemaSQL.type(key))[]))"
            let deleted = try connection.run(try statement(delete, in: connection), values: [.text(PostgresValues.arrayLiteral(keys))],
                                             returned: nil)
            guard case .done = deleted else { return deleted }
            sql = insert + selectList(columns) + " FROM " + table.sql
        }
        return try connection.run(try statement(sql, in: connection), values: table.arguments(values(rows, of: batch)), returned: nil)
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
