@_spi(BatchRunPackage) import BatchRunStore

/// `BulkLoader` for SQLite: multi-row `INSERT` statements, each prepared once per feed layout,
/// kind and number of rows and kept for the whole step on the writer's connection.
///
/// A statement holds as many rows as SQLite's bound-parameter limit allows (at most
/// `maximumRows`); a shorter run of rows goes as pieces of a power of two rows, so a step
/// prepares at most a dozen statements per layout and kind whatever its batches hold.
///
/// ```swift
/// let loader = SQLiteBulkLoader(entity: entity)
/// let (outcome, _) = try loader.insert(0..<128, of: batch, layout: 0, columns: names, assigningKeys: false, in: connection)
/// ```
package final class SQLiteBulkLoader: BulkLoader {
    package enum Kind: Hashable {
        /// `INSERT INTO t (columns) VALUES (...), ...`
        case insert
        /// The same, `RETURNING key`: the keys SQLite assigns to an integer key left NULL.
        case insertReturningKey
        /// The same, `RETURNING` every column: the rows as stored.
        case insertReturningRows
        /// `... ON CONFLICT (key) DO UPDATE SET c = excluded.c ...` (object-trump, recompute).
        case upsertOurs
        /// `... ON CONFLICT (key) DO UPDATE SET c = coalesce(c, excluded.c) ...` (store-trump).
        case upsertFillNulls
        /// `INSERT OR REPLACE ...` (overwrite, after the rows are deleted; an entity with no
        /// unique column besides its key, else `.insert` in a savepoint: `replaceChecked`).
        case replace
        /// `DELETE FROM t WHERE key IN (?, ...)` (overwrite).
        case deleteKeys
        /// `SELECT max(key) FROM t` (an integer key).
        case largestKey
    }

    private struct Key: Hashable {
        var kind: Kind
        var layout: Int
        var rows: Int
    }

    /// More rows per statement gain nothing measurable and cost preparing time and memory.
    package static let maximumRows = 128

    package let entity: Entity
    /// The entity has a unique column (or group) besides its key: see `replaceChecked`.
    private let hasUniquesBesidesKey: Bool
    private var statements: [Key: PreparedStatement] = [:]
    private var connection: ObjectIdentifier?
    /// SQLite's bound-parameter limit on the connection (`SQLITE_LIMIT_VARIABLE_NUMBER`).
    package private(set) var parameterLimit = 999

    package init(entity: Entity) {
        self.entity = entity
        hasUniquesBesidesKey = entity.uniqueColumnSets.count > 1
    }

    /// Nothing to prepare: SQLite assigns keys as it inserts, in the same process.
    /// SQLite has no import lanes: never called.
    package func drawKeys(_ count: Int) throws -> [Int64] {
        throw KeysNotGiven()
    }

    package func useKeys(_ keys: [Int64]?) {}

    package func expectNext(rows: Int) {}

    package func nextChunk(_ remaining: Int, columns: Int) -> Int {
        let full = rowsPerStatement(columns: columns)
        if remaining >= full { return full }
        return 1 << (Int.bitWidth - 1 - remaining.leadingZeroBitCount)
    }

    /// Rows per statement for `columns` bound values per row.
    package func rowsPerStatement(columns: Int) -> Int {
        max(1, min(Self.maximumRows, parameterLimit / max(columns, 1)))
    }

    package func insert(_ rows: ArraySlice<Int>, of batch: RowBatch, layout: Int, columns: [String], assigningKeys: Bool,
                in connection: any StoreConnection) throws -> (outcome: StatementOutcome, keys: [Int64]) {
        use(connection)
        // Without the key column, each row takes the largest key + 1, so the rows' keys are the
        // run ending at the last one, unless the largest is near Int64.max (SQLite then picks at
        // random); a NULL key among given ones, or that case, reads them back with RETURNING
        // (which doubles the cost). One row's key is the last one inserted.
        let keyLeftOut = !columns.contains(entity.primaryKey[0])
        var consecutive = assigningKeys && rows.count == 1
        if assigningKeys && !consecutive && keyLeftOut {
            consecutive = try largestKey(in: connection) <= Int64.max - Int64(rows.count)
        }
        let returning = assigningKeys && !consecutive
        let statement = try statement(returning ? .insertReturningKey : .insert, layout: layout, columns: columns,
                                      rows: rows.count, in: connection)
        var keys: [Int64] = []
        let outcome = try connection.run(statement, rows: rows, of: batch, returned: returning ? { row in
            if case .integer(let key) = row[0] { keys.append(key) }
        } : nil)
        if case .done = outcome, consecutive {
            let last = connection.lastInsertedRowID
            keys = Array((last - Int64(rows.count) + 1)...last)
        }
        return (outcome, keys)
    }

    package func insertReturningRows(_ rows: ArraySlice<Int>, of batch: RowBatch, layout: Int, columns: [String],
                                     in connection: any StoreConnection, returned: ([StoreValue]) -> Void) throws -> StatementOutcome {
        use(connection)
        var stored: [[StoreValue]] = []
        let statement = try statement(.insertReturningRows, layout: layout, columns: columns, rows: rows.count, in: connection)
        let outcome = try connection.run(statement, rows: rows, of: batch, returned: { stored.append($0) })
        if outcome.isDone { stored.forEach(returned) }
        return outcome
    }

    package func resolve(_ rows: [Int], keys: [StoreValue], of batch: RowBatch, layout: Int, columns: [String],
                 as resolution: BulkResolution, in connection: any StoreConnection) throws -> StatementOutcome {
        use(connection)
        let kind: Kind
        switch resolution {
        case .ours: kind = .upsertOurs
        case .fillNulls: kind = .upsertFillNulls
        case .replace:
            // Overwrite replaces the row whole: columns the feed does not give take their defaults.
            let delete = try statement(.deleteKeys, layout: 0, columns: [], rows: rows.count, in: connection)
            if hasUniquesBesidesKey {
                return try replaceChecked(rows, keys: keys, of: batch, layout: layout, columns: columns, delete: delete, in: connection)
            }
            let deleted = try connection.run(delete, values: keys, returned: nil)
            guard case .done = deleted else { return deleted }
            kind = .replace
        }
        return try connection.run(try statement(kind, layout: layout, columns: columns, rows: rows.count, in: connection),
                                  rows: rows[...], of: batch, returned: nil)
    }

    /// Overwrite of an entity with unique columns besides its key: `INSERT OR REPLACE` would
    /// delete a row holding one of our unique values under another key without a word, so the
    /// rows go in with a plain `INSERT`, in a savepoint with their keys' delete. A row that takes
    /// another's unique value has the statement refused and both backed out: its chunk goes row
    /// by row through `ConflictResolver`, which records the row it deletes (as on PostgreSQL).
    /// Costs a savepoint per chunk; an entity without such columns keeps the one statement.
    private func replaceChecked(_ rows: [Int], keys: [StoreValue], of batch: RowBatch, layout: Int, columns: [String],
                                delete: PreparedStatement, in connection: any StoreConnection) throws -> StatementOutcome {
        let insert = try statement(.insert, layout: layout, columns: columns, rows: rows.count, in: connection)
        var outcome = StatementOutcome.done
        do {
            try connection.inSavepoint {
                outcome = try connection.run(delete, values: keys, returned: nil)
                if outcome.isDone { outcome = try connection.run(insert, rows: rows[...], of: batch, returned: nil) }
                if !outcome.isDone { throw BackOut() }
            }
        } catch is BackOut {}
        return outcome
    }

    /// Thrown to roll a replace's delete back with its refused insert.
    private struct BackOut: Error {}

    /// Statements prepared on another connection are dropped.
    package func use(_ connection: any StoreConnection) {
        guard connection.identity != self.connection else { return }
        statements = [:]
        self.connection = connection.identity
        parameterLimit = connection.parameterLimit
    }

    /// The largest key of the entity's table (an integer key), 0 when it is empty.
    private func largestKey(in connection: any StoreConnection) throws -> Int64 {
        var largest: Int64 = 0
        try connection.forEachRow(try statement(.largestKey, layout: 0, columns: [], rows: 0, in: connection), positional: []) { row in
            if case .integer(let value) = row[0] { largest = value }
        }
        return largest
    }

    /// The statement of `kind` for `rows` rows of a layout's `columns`.
    private func statement(_ kind: Kind, layout: Int, columns: [String], rows: Int, in connection: any StoreConnection) throws
        -> PreparedStatement {
        let key = Key(kind: kind, layout: layout, rows: rows)
        if let statement = statements[key] { return statement }
        let statement = try connection.prepare(sql(kind, columns: columns, rows: rows))
        statements[key] = statement
        return statement
    }

    package func sql(_ kind: Kind, columns: [String], rows: Int) -> String {
        let table = SQL.quote(entity.tableName), keyList = SQL.quoteList(entity.primaryKey)
        switch kind {
        case .insert: return InsertSQL.insert(entity, columns: columns, rows: rows)
        case .insertReturningKey: return InsertSQL.insert(entity, columns: columns, rows: rows) + " RETURNING \(keyList)"
        case .insertReturningRows:
            return InsertSQL.insert(entity, columns: columns, rows: rows) + " RETURNING \(SQL.quoteList(entity.columnNames))"
        case .upsertOurs: return InsertSQL.upsert(entity, columns: columns, rows: rows, .ours)
        case .upsertFillNulls: return InsertSQL.upsert(entity, columns: columns, rows: rows, .fillNulls)
        case .replace:
            return "INSERT OR REPLACE INTO \(table) (\(SQL.quoteList(columns))) VALUES "
                + Array(repeating: "(" + Array(repeating: "?", count: columns.count).joined(separator: ", ") + ")", count: rows)
                    .joined(separator: ", ")
        case .largestKey:
            return "SELECT max(\(keyList)) FROM \(table)"
        case .deleteKeys:
            return "DELETE FROM \(table) WHERE \(keyList) IN (" + Array(repeating: "?", count: rows).joined(separator: ", ") + ")"
        }
    }
}
