/// One connection of the store inside a transaction, as the layers above the Store use it:
/// statements as SQL text with `?` and `:name` placeholders, values as `StoreValue`, rows as
/// arrays of values. The backend's read and write hand one to their closure; it is valid only
/// inside that closure. `SQLiteConnection` implements it over GRDB's `Database`.
///
/// Statements a step runs again and again are prepared once (`prepare`) and bound without
/// building arguments (`run`, `forEachRow`); the others go by their text (`execute`,
/// `rows`), which the backend caches.
///
/// ```swift
/// try store.backend.write(interruptedBy: nil) { connection in
///     let done = try connection.execute("UPDATE \"Session\" SET status = ? WHERE id = ?", [.text("closed"), .integer(7)])
///     let open = try connection.rows("SELECT id FROM \"Session\" WHERE status = 'open'")
/// }
/// ```
package protocol StoreConnection: AnyObject {
    /// The same for every transaction on one underlying connection: prepared statements are
    /// valid only on the connection that prepared them.
    var identity: ObjectIdentifier { get }

    /// The most values one statement can bind.
    var parameterLimit: Int { get }

    /// The rowid the last successful INSERT assigned.
    var lastInsertedRowID: Int64 { get }

    /// Rows changed by the last statement.
    var changedRowCount: Int { get }

    /// Prepares `sql` on this connection, for `run` and `forEachRow`.
    func prepare(_ sql: String) throws -> PreparedStatement

    /// Runs `statement` with the cells of `rows` of `batch` bound in order, the rows it returns
    /// (`RETURNING`) handed to `returned`. Text is bound without a copy. A failure that stops
    /// the transaction (an interrupt, a busy, full or read-only store) throws; a refusal of
    /// these rows is the outcome, and nothing of the statement was written.
    func run(_ statement: PreparedStatement, rows: ArraySlice<Int>, of batch: RowBatch,
             returned: (([StoreValue]) -> Void)?) throws -> StatementOutcome

    /// `run` with values bound by position.
    func run(_ statement: PreparedStatement, values: [StoreValue], returned: (([StoreValue]) -> Void)?) throws -> StatementOutcome

    /// Steps through the rows of `statement`, `:name` placeholders bound from `named` and `?`
    /// ones from `positional`. Each row is handed over as its first `split` columns (as read),
    /// and the same with the remaining columns written over the positions in `assigned`;
    /// without assignments both arrays are the same. Any failure throws.
    func forEachRow(_ statement: PreparedStatement, named: [String: StoreValue], positional: [StoreValue], split: Int,
                    assigned: [Int], _ body: (_ read: [StoreValue], _ changed: [StoreValue]) throws -> Void) throws

    /// Appends the rows of `statement` (its `?` placeholders bound from `positional`) to
    /// `batch` as typed cells, one batch row per row: an import's lookup of the rows it collides
    /// with, read without a value made per cell.
    func readRows(_ statement: PreparedStatement, positional: [StoreValue], into batch: inout RowBatch) throws

    /// Runs `sql` (prepared once per connection and kept) with `arguments`; rows go to `body`.
    /// Any failure throws.
    func forEachRow(_ sql: String, _ arguments: SQLArguments, _ body: ([StoreValue]) throws -> Void) throws

    /// The rows of `sql`, each readable by column name.
    func namedRows(_ sql: String, _ arguments: SQLArguments) throws -> [NamedRow]

    /// Calls `rolledBack` if the transaction this connection is in rolls back.
    func onRollback(_ rolledBack: @escaping @Sendable () -> Void)

    /// Runs `body` in a savepoint: what it wrote is undone when it throws, and the enclosing
    /// transaction goes on.
    func inSavepoint<T>(_ body: () throws -> T) throws -> T

    /// True when a table of that name exists.
    func tableExists(_ name: String) throws -> Bool

    /// The names of a table's columns, lowercased; empty when there is no such table.
    func columnNames(of table: String) throws -> Set<String>

    /// The column names (lowercased) of those of `tables` that exist, by table; a missing table
    /// has no entry. One catalog query on PostgreSQL.
    func columnNames(ofTables tables: [String]) throws -> [String: Set<String>]

    /// Creates `entity`'s table and indexes when missing, with this database's types.
    func createTable(_ entity: Entity) throws

    /// After rows with given integer keys went into `entity`'s table: keys the store assigns
    /// from now on come after them (SQLite's rowid does so by itself; PostgreSQL's identity
    /// sequence is moved past the largest key).
    func advanceAssignedKeys(of entity: Entity) throws

    /// `advanceAssignedKeys` when the largest key given is known (`largest`), without reading
    /// the table: the sequence is moved to it unless it is past it already. An import lane's
    /// batch calls it in its turn (`ImportLanes`), so that the sequence only moves forward.
    func advanceAssignedKeys(of entity: Entity, past largest: Int64) throws

    /// `rows` rows of values of `types` as a table (`ValuesTable`): SQLite's `VALUES` list,
    /// PostgreSQL's `unnest` of one array per column (a short statement text, whatever the rows).
    func valuesTable(of types: [ColumnType], rows: Int) -> ValuesTable

    /// How many rows of `columns` values one values table takes.
    func valuesTableRows(columns: Int) -> Int
}

extension StoreConnection {
    package func columnNames(ofTables tables: [String]) throws -> [String: Set<String>] {
        var columns: [String: Set<String>] = [:]
        for table in tables {
            let names = try columnNames(of: table)
            if !names.isEmpty { columns[table] = names }
        }
        return columns
    }

    /// Runs one statement by its text; returns the rows it changed. Any failure throws.
    @discardableResult
    package func execute(_ sql: String, _ arguments: SQLArguments = []) throws -> Int {
        try forEachRow(sql, arguments) { _ in }
        return changedRowCount
    }

    /// The rows of one statement, each as its columns' values.
    package func rows(_ sql: String, _ arguments: SQLArguments = []) throws -> [[StoreValue]] {
        var rows: [[StoreValue]] = []
        try forEachRow(sql, arguments) { rows.append($0) }
        return rows
    }

    /// The first column of the first row, nil when there is no row.
    package func value(_ sql: String, _ arguments: SQLArguments = []) throws -> StoreValue? {
        var first: StoreValue?
        try forEachRow(sql, arguments) { row in if first == nil { first = row.first } }
        return first
    }

    /// `forEachRow` of a statement with positional values only, rows whole.
    package func forEachRow(_ statement: PreparedStatement, positional: [StoreValue], _ body: ([StoreValue]) throws -> Void) throws {
        try forEachRow(statement, named: [:], positional: positional, split: Int.max, assigned: []) { row, _ in try body(row) }
    }

    /// `readRows` through `forEachRow`, for a backend without a faster way.
    package func readRows(_ statement: PreparedStatement, positional: [StoreValue], into batch: inout RowBatch) throws {
        try forEachRow(statement, positional: positional) { row in
            batch.beginRow(line: 0, layout: 0)
            for value in row { batch.append(value) }
        }
    }
}

/// A statement prepared on one connection (`StoreConnection.prepare`), valid on it only.
package final class PreparedStatement {
    package let sql: String
    /// The backend's own statement (GRDB's `Statement` on SQLite).
    package let native: AnyObject

    package init(sql: String, native: AnyObject) {
        self.sql = sql
        self.native = native
    }
}

/// How a statement went when it did not stop the transaction.
package enum StatementOutcome {
    case done
    /// A primary-key or unique constraint refused the rows; nothing of the statement was written.
    case keyTaken(StatementFailure)
    /// Another refusal of these rows (a NOT NULL or CHECK constraint, a value of the wrong
    /// type); nothing of the statement was written.
    case refused(StatementFailure)

    package var isDone: Bool {
        if case .done = self { return true }
        return false
    }

    /// Throws the failure of anything but `.done`.
    package func check() throws {
        switch self {
        case .done: return
        case .keyTaken(let failure), .refused(let failure): throw failure.error
        }
    }
}

/// A statement's failure: the database's message (no decoration) and its own error.
package struct StatementFailure {
    package let message: String
    package let error: any Error

    package init(message: String, error: any Error) {
        self.message = message
        self.error = error
    }
}

/// Values for a statement's placeholders: `?` by position, `:name` by name.
///
/// ```swift
/// let arguments: SQLArguments = [.integer(7)]
/// let named = SQLArguments(named: ["status": .text("open")])
/// ```
package struct SQLArguments: ExpressibleByArrayLiteral {
    package var positional: [StoreValue]
    package var named: [String: StoreValue]

    package init(_ positional: [StoreValue] = [], named: [String: StoreValue] = [:]) {
        self.positional = positional
        self.named = named
    }

    package init(arrayLiteral elements: StoreValue...) {
        self.init(elements)
    }
}
