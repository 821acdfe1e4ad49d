
/// The prepared statements of one insert step, kept for the whole step on the writer's
/// connection: multi-row INSERTs and the set-based conflict statements, one per feed layout,
/// kind and number of rows.
///
/// A statement holds as many rows as the store's bound-parameter limit allows (at most
/// `maximumRows`); a shorter run of rows goes as pieces of a power of two rows, so a step
/// prepares at most a dozen statements per layout and kind whatever its batches hold.
final class InsertStatements {
    enum Kind: Hashable {
        /// `INSERT INTO t (columns) VALUES (...), ...`
        case insert
        /// The same, `RETURNING key`: the keys the store assigns to an integer key left out.
        case insertReturningKey
        /// `... ON CONFLICT (key) DO UPDATE SET c = excluded.c ...` (object-trump, recompute).
        case upsertOurs
        /// `... ON CONFLICT (key) DO UPDATE SET c = coalesce(c, excluded.c) ...` (store-trump).
        case upsertFillNulls
        /// `INSERT OR REPLACE ...` (overwrite, after the rows are deleted).
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
    static let maximumRows = 128

    let entity: Entity
    private var statements: [Key: PreparedStatement] = [:]
    private var connection: ObjectIdentifier?
    /// The connection's bound-parameter limit.
    private(set) var parameterLimit = 999

    init(entity: Entity) {
        self.entity = entity
    }

    /// Starts a batch on `db`: statements prepared on another connection are dropped.
    func use(_ db: any StoreConnection) {
        guard db.identity != connection else { return }
        statements = [:]
        connection = db.identity
        parameterLimit = db.parameterLimit
    }

    /// Rows per statement for `columns` bound values per row.
    func rowsPerStatement(columns: Int) -> Int {
        max(1, min(Self.maximumRows, parameterLimit / max(columns, 1)))
    }

    /// How many of `remaining` rows the next statement takes: a full statement, else the
    /// largest power of two that fits.
    func nextChunk(_ remaining: Int, columns: Int) -> Int {
        let full = rowsPerStatement(columns: columns)
        if remaining >= full { return full }
        return 1 << (Int.bitWidth - 1 - remaining.leadingZeroBitCount)
    }

    /// The statement of `kind` for `rows` rows of a layout's `columns`.
    func statement(_ kind: Kind, layout: Int, columns: [String], rows: Int, in db: any StoreConnection) throws -> PreparedStatement {
        let key = Key(kind: kind, layout: layout, rows: rows)
        if let statement = statements[key] { return statement }
        let statement = try db.prepare(sql(kind, columns: columns, rows: rows))
        statements[key] = statement
        return statement
    }

    /// The largest key of the entity's table (an integer key), 0 when it is empty.
    func largestKey(in db: any StoreConnection) throws -> Int64 {
        var largest: Int64 = 0
        try db.forEachRow(try statement(.largestKey, layout: 0, columns: [], rows: 0, in: db), positional: []) { row in
            if case .integer(let value) = row[0] { largest = value }
        }
        return largest
    }

    func sql(_ kind: Kind, columns: [String], rows: Int) -> String {
        let table = SQL.quote(entity.tableName)
        let plain = "(" + Array(repeating: "?", count: columns.count).joined(separator: ", ") + ")"
        func values(_ tuple: String) -> String { Array(repeating: tuple, count: rows).joined(separator: ", ") }
        let keyList = SQL.quoteList(entity.primaryKey)
        let keyColumns = Set(entity.primaryKey)
        let others = columns.filter { !keyColumns.contains($0) }.map(SQL.quote)
        switch kind {
        case .insert, .insertReturningKey:
            // A NULL for a not-null column with a default takes the default, as one-row inserts do.
            let tuple = "(" + columns.map { name -> String in
                if let column = entity.column(named: name), column.notNull, let literal = column.defaultLiteral {
                    return "coalesce(?, \(literal))"
                }
                return "?"
            }.joined(separator: ", ") + ")"
            return "INSERT INTO \(table) (\(SQL.quoteList(columns))) VALUES \(values(tuple))"
                + (kind == .insertReturningKey ? " RETURNING \(keyList)" : "")
        case .upsertOurs:
            return "INSERT INTO \(table) (\(SQL.quoteList(columns))) VALUES \(values(plain)) ON CONFLICT (\(keyList)) DO UPDATE SET "
                + others.map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
        case .upsertFillNulls:
            return "INSERT INTO \(table) (\(SQL.quoteList(columns))) VALUES \(values(plain)) ON CONFLICT (\(keyList)) DO UPDATE SET "
                + others.map { "\($0) = coalesce(\($0), excluded.\($0))" }.joined(separator: ", ")
        case .replace:
            return "INSERT OR REPLACE INTO \(table) (\(SQL.quoteList(columns))) VALUES \(values(plain))"
        case .largestKey:
            return "SELECT max(\(keyList)) FROM \(table)"
        case .deleteKeys:
            return "DELETE FROM \(table) WHERE \(keyList) IN (" + Array(repeating: "?", count: rows).joined(separator: ", ") + ")"
        }
    }
}
