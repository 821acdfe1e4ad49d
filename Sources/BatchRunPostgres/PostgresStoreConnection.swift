#if PostgreSQL
@_spi(BatchRunPackage) import BatchRunStore
import Foundation
import PostgresNIO
import Synchronization

/// `StoreConnection` over one PostgresNIO connection, used from the calling thread: each
/// statement waits for its result (`EventLoopFuture.wait()`, allowed on any thread that is not
/// an event loop's). Placeholders are turned into `$n` (`PostgresPlaceholders`); a real is sent
/// as `double precision` and every other value as untyped text, so the server reads it as the
/// type the statement needs (a column's bigint, boolean or timestamptz): `PostgresBindings.append`. A statement whose refusal is an outcome (`run`) runs in a
/// savepoint, since a failed statement would otherwise abort the whole transaction.
///
/// ```swift
/// let connection = PostgresStoreConnection(try PostgresConnection.connect(...).wait())
/// try connection.execute("UPDATE \"Session\" SET status = ? WHERE id = ?", [.text("closed"), .integer(7)])
/// ```
package final class PostgresStoreConnection: StoreConnection {
    package let connection: PostgresConnection
    private let logger = Logger(label: "batchrun.postgres")
    private var texts: [String: PostgresPlaceholders] = [:]
    private var rollbackBlocks: [@Sendable () -> Void] = []
    package private(set) var changedRowCount = 0
    /// The statement that began the open transaction, while no other has run in it since.
    private var freshTransaction: String?
    /// Numbers `refusable`'s savepoints: each statement's has its own name, so a rollback to it
    /// can never reach an earlier statement's (see `refusable`).
    private var savepoints = 0
    /// Statements sent whose answers are not read yet (`send`: a BEGIN, a savepoint's).
    private var unanswered: [EventLoopPromise<PostgresQueryMetadata>] = []
    /// Fails the request being waited for when the connection closes under it.
    private let waiting = WaitingRequest()
    /// Set when the process's session pool took the connection over: it stays open then.
    private var isKeptOpen = false
    /// The role the session runs statements as (`worker --item-role`; nil: the URL's user).
    /// batchrun's own statements, the ones naming its tables (`ownTables`: run state, the
    /// queue's fence, schema records), run as the URL's user: `RESET ROLE` is sent before each
    /// (without waiting), `SET ROLE` after it (waited for: a session whose role could not be
    /// taken back is closed). A confined item's SQL never names them (`JobFileBuilder` refuses
    /// `_batchrun_` in an item); a table of batchrun's missing from the list fails as the item
    /// role, never the other way round.
    package private(set) var itemRole: String?

    /// batchrun's own tables.
    static let ownTables = ["_batchrun_queue", "_batchrun_runs", "_batchrun_jobs", "_batchrun_progress", "_batchrun_checkpoints",
                            "_batchrun_schedule", "_batchrun_schema"]

    package init(_ connection: PostgresConnection) {
        self.connection = connection
        connection.closeFuture.whenComplete { [waiting] _ in waiting.fail(Self.closed) }
    }

    /// A session nothing keeps is closed, also when an error dropped it halfway (a store that
    /// failed to open, a new session the server ended at once): PostgresNIO requires it.
    deinit {
        if !isKeptOpen { _ = try? connection.close().wait() }
    }

    /// Hands the connection over to the session pool: releasing this session leaves it open.
    func keepOpen() {
        isKeptOpen = true
    }

    package var identity: ObjectIdentifier { ObjectIdentifier(connection) }

    /// PostgreSQL's protocol counts parameters in 16 bits.
    package var parameterLimit: Int { 65_535 }

    /// PostgreSQL has no rowid: keys the store assigns come back with `RETURNING`.
    package var lastInsertedRowID: Int64 { 0 }

    package func prepare(_ sql: String) throws -> PreparedStatement {
        PreparedStatement(sql: sql, native: PreparedText(placeholders(sql)))
    }

    package func run(_ statement: PreparedStatement, rows: ArraySlice<Int>, of batch: RowBatch,
             returned: (([StoreValue]) -> Void)?) throws -> StatementOutcome {
        var values: [StoreValue] = []
        for row in rows {
            for cell in batch.cells(of: row) { values.append(batch.value(at: cell)) }
        }
        return try run(statement, values: values, returned: returned)
    }

    package func run(_ statement: PreparedStatement, values: [StoreValue], returned: (([StoreValue]) -> Void)?) throws -> StatementOutcome {
        let text = Self.text(statement)
        return try refusable {
            let rows = try query(text.sql, try text.values(positional: values, named: [:]))
            if let returned { for row in rows.values { returned(row) } }
        }
    }

    /// `work` in a savepoint: a statement the server refuses is rolled back alone, leaving the
    /// transaction usable, and comes back as the outcome; an interrupt or a busy, full or
    /// read-only store throws.
    /// As the transaction's first statement it needs no savepoint: a refusal rolls the
    /// transaction back and begins it again, which leaves it as it was (two round trips fewer
    /// for each batch of an import, and for a queue item's first insert). Otherwise the
    /// SAVEPOINT and the RELEASE are sent without waiting (`send`): their answers are read
    /// with the next statement's, so the thread waits for the server once per statement.
    private func refusable(_ work: () throws -> Void) throws -> StatementOutcome {
        let fresh = freshTransaction
        freshTransaction = nil
        savepoints &+= 1
        let savepoint = "batchrun_statement_\(savepoints)"
        if fresh == nil { try send("SAVEPOINT \(savepoint)") }
        do {
            try work()
            if fresh == nil { try send("RELEASE SAVEPOINT \(savepoint)") }
            return .done
        } catch let error as PostgresError {
            if let fresh {
                try simple("ROLLBACK")
                try began(fresh)
            } else {
                // This statement's own savepoint: were the error the previous statement's unread
                // RELEASE (its answer is read first), a shared name would roll back to the
                // previous statement's savepoint and undo it after it was counted done; this
                // name fails instead, and the transaction with it.
                try simple("ROLLBACK TO SAVEPOINT \(savepoint)")
                try simple("RELEASE SAVEPOINT \(savepoint)")
            }
            if StoreFailure(of: error) != nil { throw error }
            let refusal = StatementFailure(message: error.databaseMessage, error: error)
            return error.sqlState == "23505" ? .keyTaken(refusal) : .refused(refusal)
        }
    }

    /// Begins a transaction with `begin` (`BEGIN READ WRITE`, `BEGIN ISOLATION LEVEL ...`): sent
    /// now, its answer read with the next statement's, so a transaction's start costs no round
    /// trip of its own (waiting for it was a fifth of the time between an import's batches). The
    /// server answers in order, and the BEGIN's failure is the one thrown. Statements sent after a
    /// BEGIN that failed run outside any transaction: the writer's session is read-only by
    /// default (`PostgresBackend`), so they cannot write, and a read's rows are not returned.
    package func began(_ begin: String) throws {
        try send(begin)
        freshTransaction = begin
    }

    /// Sends `sql` (no values, no rows) without waiting for its answer: the server answers in
    /// order, and the next statement waited for (`finished`) reads this answer first, so its
    /// failure is the one thrown.
    private func send(_ sql: String) throws {
        if connection.isClosed { throw Self.closed }
        let answer = connection.eventLoop.makePromise(of: PostgresQueryMetadata.self)
        connection.query(PostgresQuery(unsafeSQL: sql), logger: logger) { _ in }.cascade(to: answer)
        unanswered.append(answer)
    }

    /// Loads `rows` of `batch` into `table` with `COPY ... FROM STDIN`, each row followed by
    /// `extra[i]` when given; in a savepoint, so a refused row backs out the whole call and
    /// leaves the transaction usable: the outcome says why, as `run`'s does. In binary format
    /// when every value fits the table's column types (`PostgresCopyBinary.instants`), else in text.
    /// The rows go in pieces of `copyPieceRows`, each encoded on the connection's event loop
    /// while the server reads the one before (encoding a whole batch first left the server idle
    /// meanwhile); `PostgresCopyRun` keeps a session the server ends from stopping the process.
    package func copy(into table: String, columns: [String], rows: ArraySlice<Int>, of batch: RowBatch,
              extra: [Int64]? = nil) throws -> StatementOutcome {
        try copy(into: table, columns: columns, rows: rows, of: batch, extra: extra, formRead: false)
    }

    /// `formRead`: the table's form was read again after the check refused a COPY; a second
    /// refusal by the check (the table changed again meanwhile) is the outcome. `text`: in
    /// text format, a piece after the first having had no binary form.
    private func copy(into table: String, columns: [String], rows: ArraySlice<Int>, of batch: RowBatch,
                      extra: [Int64]?, formRead: Bool, text: Bool = false) throws -> StatementOutcome {
        // PostgresNIO quotes the table name it is given; the name is quoted here already.
        let quoted = String(SQL.quote(table).dropFirst().dropLast())
        let bytesPerRow = 16 * max(columns.count, 1)
        let pieces = stride(from: rows.startIndex, to: rows.endIndex, by: Self.copyPieceRows).map { $0 }
        // The first piece decides the format; each later piece is checked (and its datetimes
        // read) as it is made, while the server reads the one before: checking the whole batch
        // first kept the server waiting about 4 ms a batch of 10,000 rows, which a queue's part
        // item paid in full on its first. Once a later piece had no binary form, this session
        // checks the table's batches whole first again, as a feed with such values here and
        // there would otherwise have most batches COPYed twice.
        let checked = checkedWhole.contains(table) ? rows : rows.prefix(Self.copyPieceRows)
        let binary = text ? nil : try binaryForm(into: table, columns: columns, rows: checked, of: batch,
                                                 extra: extra.map { Array($0.prefix(checked.count)) })
        let outcome = try refusable {
            try PostgresError.translating {
                if let binary { try sendCheck(of: binary.form, columns: columns, table: table) }
                try finished(PostgresCopyRun(connection: connection, logger: logger)
                    .copy(into: quoted, columns: columns, binary: binary != nil, pieces: pieces.count) { index in
                        let start = pieces[index], end = min(start + Self.copyPieceRows, rows.endIndex)
                        let offset = start - rows.startIndex
                        let extra = extra?[offset..<(offset + end - start)]
                        var buffer = ByteBuffer()
                        buffer.reserveCapacity((end - start) * bytesPerRow + 32)
                        guard let binary else {
                            PostgresCopyText.append(rows[start..<end], of: batch, extra: extra, to: &buffer)
                            return buffer
                        }
                        let perRow = PostgresCopyBinary.stampsPerRow(binary.types)
                        let instants = offset < checked.count ? binary.instants[(offset * perRow)...]
                            : PostgresCopyBinary.instants(rows[start..<end], of: batch, types: binary.types,
                                                          zonelessIsUTC: binary.form.zonelessIsUTC, extra: extra.map(Array.init))?[...]
                        guard let instants else { throw PostgresError(sqlState: nil, message: Self.noBinaryForm) }
                        if index == 0 { buffer.writeBytes(PostgresCopyBinary.header) }
                        PostgresCopyBinary.append(rows[start..<end], of: batch, types: binary.types,
                                                  instants: instants, extra: extra, to: &buffer)
                        if index == pieces.count - 1 { buffer.writeBytes(PostgresCopyBinary.trailer) }
                        return buffer
                    })
            }
        }
        guard binary != nil, case .refused(let failure) = outcome else { return outcome }
        // The check refused it: the table's columns (or the time zone) changed since they were
        // read. Read again, and the COPY made again as the table now is.
        if !formRead, failure.message.contains(Self.tableChanged) {
            tableForms[table] = nil
            return try copy(into: table, columns: columns, rows: rows, of: batch, extra: extra, formRead: true)
        }
        // A later piece had no binary form (its own savepoint undid the COPY): the batch again, as text.
        if failure.message == Self.noBinaryForm {
            checkedWhole.insert(table)
            return try copy(into: table, columns: columns, rows: rows, of: batch, extra: extra, formRead: formRead, text: true)
        }
        return outcome
    }

    /// Why a binary COPY stopped at a piece whose values have no binary form (`copy`).
    private static let noBinaryForm = "batchrun: a value without a binary form"

    /// Tables whose binary COPYs on this session check the whole batch before they begin: one
    /// of their batches had a value without a binary form past its first piece (`copy`).
    private var checkedWhole: Set<String> = []

    /// The binary form of `rows` for a COPY into `table`: the types of `columns` as the server
    /// has them (a table made elsewhere may have an `integer` where batchrun makes a `bigint`),
    /// and whether a datetime without a zone is UTC (the session's `TimeZone`); nil when a
    /// column has no binary form batchrun writes, a value or a key does not fit
    /// (`PostgresCopyBinary.instants`, which reads the rows' datetimes for `append`), or a name
    /// could not go into PostgresNIO's COPY statement (`PostgresCopyRun`). Read once a table on
    /// this session, waited for; each binary COPY then checks them without waiting (`sendCheck`).
    private func binaryForm(into table: String, columns: [String], rows: ArraySlice<Int>, of batch: RowBatch, extra: [Int64]?)
        throws -> (form: TableForm, types: [PostgresCopyBinary.ServerType], instants: [Int64])? {
        guard !columns.isEmpty, !columns.contains(where: { $0.unicodeScalars.contains { "\"\n\r".unicodeScalars.contains($0) } })
        else { return nil }
        let form = try tableForms[table] ?? readForm(of: table)
        tableForms[table] = form
        let types = columns.compactMap { form.oids[$0].flatMap(PostgresCopyBinary.ServerType.init(oid:)) }
        guard types.count == columns.count,
              let instants = PostgresCopyBinary.instants(rows, of: batch, types: types, zonelessIsUTC: form.zonelessIsUTC, extra: extra)
        else { return nil }
        return (form, types, instants)
    }

    /// A table's columns as a binary COPY needs them (`binaryForm`).
    struct TableForm {
        /// Each column's type oid, by name.
        var oids: [String: Int64]
        /// The session's `TimeZone`.
        var timeZone: String
        var zonelessIsUTC: Bool { Self.utcZoneNames.contains(timeZone.lowercased()) }

        /// The names of UTC in PostgreSQL's time zone database, lowercased.
        private static let utcZoneNames: Set<String> = ["utc", "etc/utc", "uct", "etc/uct", "gmt", "etc/gmt", "gmt0", "etc/gmt0",
                                                        "gmt+0", "etc/gmt+0", "gmt-0", "etc/gmt-0", "greenwich", "etc/greenwich",
                                                        "universal", "etc/universal", "zulu", "etc/zulu"]
    }

    /// Per table: its form, read for its first COPY on this session.
    private var tableForms: [String: TableForm] = [:]

    /// `table`'s columns, as the server has them now (none for a table that does not exist: its
    /// COPY goes as text, and the server refuses it as before).
    private func readForm(of table: String) throws -> TableForm {
        var form = TableForm(oids: [:], timeZone: "")
        for row in try rowsKeepingFresh("""
            SELECT attname::text, atttypid::bigint, current_setting('TimeZone') FROM pg_attribute
            WHERE attrelid = to_regclass(\(SQL.literal(SQL.quote(table)))) AND attnum > 0 AND NOT attisdropped
            """, []) {
            if case .text(let name) = row[0], case .integer(let oid) = row[1], case .text(let timeZone) = row[2] {
                form.oids[name] = oid
                form.timeZone = timeZone
            }
        }
        return form
    }

    /// The text of the check's failure (`sendCheck`).
    private static let tableChanged = "batchrun: the table changed since its columns were read"

    /// Sends, without waiting, a statement that fails (`tableChanged`) unless `columns` of
    /// `table` still have `form`'s types and the session's `TimeZone` is `form`'s: its failure
    /// is read before the COPY's answer, which it aborts, and the COPY is made again as the
    /// table now is. A column's type changed by someone else between two batches would
    /// otherwise take a bigint's 8 bytes as a double's, silently. The types are the ones the
    /// statement is parsed with, after the lock naming the table takes (`ACCESS SHARE`, held to
    /// the commit): what the COPY after it sees, whatever the transaction's snapshot.
    private func sendCheck(of form: TableForm, columns: [String], table: String) throws {
        let same = columns.map { "pg_typeof(t.\(SQL.quote($0)))::oid = \(form.oids[$0] ?? 0)" }
            + ["current_setting('TimeZone') = \(SQL.literal(form.timeZone))"]
        try send("""
            SELECT CAST(CASE WHEN \(same.joined(separator: " AND ")) THEN '1' ELSE \(SQL.literal(Self.tableChanged)) END AS int)
            FROM (VALUES (1)) AS one LEFT JOIN \(SQL.quote(table)) AS t ON false
            """)
    }

    /// Whether `copy` can run: PostgresNIO's channel is found (`PostgresCopyRun.channel`).
    package private(set) lazy var copies = PostgresCopyRun.channel(of: connection) != nil

    /// Rows per piece of a COPY: about 100 KB of a 20-column feed.
    static let copyPieceRows = 500

    package func forEachRow(_ statement: PreparedStatement, named: [String: StoreValue], positional: [StoreValue], split: Int,
                    assigned: [Int], _ body: (_ read: [StoreValue], _ changed: [StoreValue]) throws -> Void) throws {
        let text = Self.text(statement)
        let rows = try query(text.sql, try text.values(positional: positional, named: named))
        for row in rows.values {
            let read = split < row.count ? Array(row[0..<split]) : row
            if assigned.isEmpty {
                try body(read, read)
            } else {
                var changed = read
                for (offset, position) in assigned.enumerated() { changed[position] = row[split + offset] }
                try body(read, changed)
            }
        }
    }

    package func forEachRow(_ sql: String, _ arguments: SQLArguments, _ body: ([StoreValue]) throws -> Void) throws {
        let text = placeholders(sql)
        for row in try query(text.sql, try text.values(positional: arguments.positional, named: arguments.named)).values {
            try body(row)
        }
    }

    package func namedRows(_ sql: String, _ arguments: SQLArguments) throws -> [NamedRow] {
        let text = placeholders(sql)
        let rows = try query(text.sql, try text.values(positional: arguments.positional, named: arguments.named))
        let positions = Dictionary(rows.columns.enumerated().map { ($1, $0) }) { first, _ in first }
        return rows.values.map { NamedRow(values: $0, positions: positions) }
    }

    package func onRollback(_ rolledBack: @escaping @Sendable () -> Void) {
        rollbackBlocks.append(rolledBack)
    }

    /// Called by the backend when the transaction ends: the rollback blocks run if it rolled back.
    func transactionEnded(committed: Bool) {
        freshTransaction = nil
        let blocks = rollbackBlocks
        rollbackBlocks = []
        if !committed { for block in blocks { block() } }
    }

    package func inSavepoint<T>(_ body: () throws -> T) throws -> T {
        try simple("SAVEPOINT batchrun_block")
        do {
            let value = try body()
            try simple("RELEASE SAVEPOINT batchrun_block")
            return value
        } catch {
            try? simple("ROLLBACK TO SAVEPOINT batchrun_block")
            try? simple("RELEASE SAVEPOINT batchrun_block")
            throw error
        }
    }

    package func valuesTable(of types: [ColumnType], rows: Int) -> ValuesTable {
        let arrays = types.map { "CAST(? AS \(PostgresSchemaSQL.type($0))[])" }.joined(separator: ", ")
        let names = types.indices.map { "column\($0 + 1)" }.joined(separator: ", ")
        let width = types.count
        return ValuesTable(sql: "unnest(\(arrays)) AS v(\(names))", arguments: { values in
            (0..<width).map { column in .text(PostgresValues.arrayLiteral(stride(from: column, to: values.count, by: width).lazy.map { values[$0] })) }
        })
    }

    /// A whole save's rows: the statement's text does not grow with them.
    package func valuesTableRows(columns: Int) -> Int { 50_000 }

    package func advanceAssignedKeys(of entity: Entity) throws {
        guard entity.hasRowidKey else { return }
        let table = SQL.quote(entity.tableName), key = SQL.quote(entity.primaryKey[0])
        try execute("SELECT setval(\(PostgresSchemaSQL.keySequence(of: entity)), "
                    + "greatest((SELECT max(\(key)) FROM \(table)), 1), (SELECT max(\(key)) FROM \(table)) IS NOT NULL)")
    }

    package func advanceAssignedKeys(of entity: Entity, past largest: Int64) throws {
        guard entity.hasRowidKey else { return }
        let sequence = "\(PostgresSchemaSQL.keySequence(of: entity))::regclass"
        // `pg_sequence_last_value` is NULL for a sequence never drawn from.
        _ = try execute("SELECT setval(\(sequence), ?) WHERE coalesce(pg_sequence_last_value(\(sequence)), 0) < ?",
                        SQLArguments([.integer(largest), .integer(largest)]))
    }

    package func tableExists(_ name: String) throws -> Bool {
        // The catalog itself, not the pg_tables and information_schema views: on a new session
        // those views cost milliseconds each to plan (measured: 5 of a trivial run's 24 ms).
        try value("""
            SELECT count(*) FROM pg_catalog.pg_class
            WHERE relnamespace = current_schema()::regnamespace AND relname = ? AND relkind IN ('r', 'p')
            """, [.text(name)]) != .integer(0)
    }

    package func columnNames(of table: String) throws -> Set<String> {
        try columnNames(ofTables: [table])[table] ?? []
    }

    /// The column names (lowercased) of those of `tables` that exist in the current schema, in
    /// one catalog query (a store's open verifies all its tables with it).
    package func columnNames(ofTables tables: [String]) throws -> [String: Set<String>] {
        // An array literal: each name double-quoted, its quotes and backslashes escaped.
        let names = "{" + tables.map { "\"" + $0.replacingOccurrences(of: "\\", with: "\\\\")
            .replacingOccurrences(of: "\"", with: "\\\"") + "\"" }.joined(separator: ",") + "}"
        var columns: [String: Set<String>] = [:]
        for row in try rows("""
            SELECT c.relname, a.attname FROM pg_catalog.pg_class c
            LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
            WHERE c.relnamespace = current_schema()::regnamespace AND c.relname = ANY(?::text[]) AND c.relkind IN ('r', 'p')
            """, [.text(names)]) {
            guard let table = row[0].string else { continue }
            columns[table, default: []].formUnion(row[1].string.map { [$0.lowercased()] } ?? [])
        }
        return columns
    }

    /// Under a transaction-scoped advisory lock: PostgreSQL's `CREATE TABLE IF NOT EXISTS` is
    /// not safe against another session creating the same table at the same moment (the second
    /// fails on the table's type), so batchrun's processes create tables one at a time.
    package func createTable(_ entity: Entity) throws {
        try simple("SELECT pg_advisory_xact_lock(\(Self.ddlLock))")
        for statement in PostgresSchemaSQL.statements(for: Model(entities: [entity])) { try simple(statement) }
    }

    /// The advisory lock key batchrun's table creation takes ("batchrun" in ASCII).
    static let ddlLock: Int64 = 0x6261_7463_6872_756E

    // MARK: Talking to the server

    /// Rows as they came, with the columns' names.
    package struct Rows {
        package var columns: [String] = []
        package var values: [[StoreValue]] = []
    }

    /// The rows of a read that leaves the transaction as fresh as it was (`refusable`): an
    /// import's keys drawn before its COPY, so the COPY, still the transaction's first write,
    /// needs no savepoint (two round trips a batch). A refusal's ROLLBACK then loses nothing
    /// the savepoint's would have kept: sequence values drawn stay drawn either way.
    func rowsKeepingFresh(_ sql: String, _ values: [StoreValue]) throws -> [[StoreValue]] {
        let fresh = freshTransaction
        let text = placeholders(sql)
        let rows = try query(text.sql, try text.values(positional: values, named: [:])).values
        freshTransaction = fresh
        return rows
    }

    /// Makes `role` the session's role (nil: the URL's user), unless it is already. A role
    /// that leaves the session as its user (the user's own name) is refused: it would confine
    /// nothing.
    func take(role: String?) throws {
        guard role != itemRole else { return }
        let rows = try query("SELECT set_config('role', \(role.map(SQL.literal) ?? "'none'"), false), (current_user = session_user)::int", [])
        if let role, rows.values.first?.last == .integer(1) {
            try? simple("RESET ROLE")
            throw PostgresError(sqlState: "42501", message: "--item-role \(role) is the worker's own user: items would run with all "
                                + "its rights; name a role of their own (docs/postgresql.md)")
        }
        itemRole = role
    }

    /// `body`, a statement of batchrun's own when `sql` names one of `ownTables`: as the URL's
    /// user when the session has an item role (see `itemRole`).
    private func asOwner<T>(_ sql: String, _ body: () throws -> T) throws -> T {
        guard let itemRole, Self.ownTables.contains(where: sql.contains) else { return try body() }
        try send("RESET ROLE")
        let value: T
        do {
            value = try body()
        } catch {
            try restoreRole(itemRole, after: error)
            throw error
        }
        try restoreRole(itemRole, after: nil)
        return value
    }

    /// `SET ROLE role` again after one of batchrun's own statements, waited for. In a
    /// transaction that `failure` aborted it fails, and the rollback brings the role back;
    /// any other failure leaves the session as its user, so it is closed.
    private func restoreRole(_ role: String, after failure: (any Error)?) throws {
        do {
            freshTransaction = nil
            _ = try PostgresError.translating {
                try finished(connection.query(PostgresQuery(unsafeSQL: "SET ROLE \(SQL.quote(role))"), logger: logger) { _ in })
            }
        } catch let error as PostgresError where failure != nil && error.sqlState == "25P02" {
            return
        } catch {
            _ = try? connection.close().wait()
            throw failure ?? error
        }
    }

    /// Runs one statement with `values` for `$1`, `$2`, ...; waits for all its rows.
    package func query(_ sql: String, _ values: [StoreValue]) throws -> Rows {
        try asOwner(sql) { try runQuery(sql, values) }
    }

    private func runQuery(_ sql: String, _ values: [StoreValue]) throws -> Rows {
        freshTransaction = nil
        var bindings = PostgresBindings(capacity: values.count)
        for value in values { bindings.append(value) }
        let collector = RowCollector()
        let metadata = try PostgresError.translating {
            try finished(connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger) { row in
                try collector.add(row)
            })
        }
        changedRowCount = metadata.rows ?? 0
        return collector.rows.withLock { $0 }
    }

    /// Commits; a transaction the server had already aborted answers ROLLBACK, which throws.
    package func commit() throws {
        let metadata = try PostgresError.translating {
            try finished(connection.query(PostgresQuery(unsafeSQL: "COMMIT"), logger: logger) { _ in })
        }
        if metadata.command != "COMMIT" { throw PostgresRolledBack() }
    }

    /// One statement with no values and no rows (BEGIN, SAVEPOINT, DDL). Through the same
    /// call as every other statement, so a failure is a `PSQLError` with the server's fields
    /// (the older `simpleQuery` reports another error type, without them).
    package func simple(_ sql: String) throws {
        try asOwner(sql) {
            freshTransaction = nil
            _ = try PostgresError.translating {
                try finished(connection.query(PostgresQuery(unsafeSQL: sql), logger: logger) { _ in })
            }
        }
    }

    /// Waits for `request`'s result; fails at once when the connection is or becomes closed.
    /// PostgresNIO writes a request to a closed connection without a promise, so its future
    /// would never complete: a runner whose session the server ended waited forever on ROLLBACK.
    /// Statements sent before it (`send`) are answered first: the first failure is the one thrown.
    private func finished<T: Sendable>(_ request: @autoclosure () -> EventLoopFuture<T>) throws -> T {
        let earlier = unanswered
        unanswered = []
        if connection.isClosed {
            for answer in earlier { answer.fail(Self.closed) }
            throw Self.closed
        }
        let result = connection.eventLoop.makePromise(of: T.self)
        let failBoth: @Sendable (any Error) -> Void = { error in
            for answer in earlier { answer.fail(error) }
            result.fail(error)
        }
        waiting.set(failBoth)
        defer { waiting.set(nil) }
        request().cascade(to: result)
        // Closed between the first check and `waiting.set`: nothing would fail the promises.
        if connection.isClosed { failBoth(Self.closed) }
        let answer = Result { try result.futureResult.wait() }
        for sent in earlier { _ = try sent.futureResult.wait() }
        return try answer.get()
    }

    /// What a statement on a closed connection fails with.
    package static let closed = PostgresError(sqlState: nil, message: "the connection to the server was closed", lostConnection: true)

    private func placeholders(_ sql: String) -> PostgresPlaceholders {
        if let text = texts[sql] { return text }
        let text = PostgresPlaceholders(sql)
        texts[sql] = text
        return text
    }

    private static func text(_ statement: PreparedStatement) -> PostgresPlaceholders {
        // Every PreparedStatement of this connection was made by `prepare` above.
        unsafeDowncast(statement.native, to: PreparedText.self).placeholders
    }

    /// A prepared statement: its text with `$n` placeholders (the server parses it at each run).
    private final class PreparedText {
        let placeholders: PostgresPlaceholders
        init(_ placeholders: PostgresPlaceholders) { self.placeholders = placeholders }
    }

    /// Rows decoded on the event loop's thread, read by the waiting thread after the query ends.
    private final class RowCollector: Sendable {
        let rows = Mutex(Rows())

        func add(_ row: PostgresRow) throws {
            var values: [StoreValue] = []
            values.reserveCapacity(row.count)
            for cell in row { values.append(try PostgresValues.storeValue(cell)) }
            rows.withLock { rows in
                // The names once, from the first row.
                if rows.values.isEmpty { rows.columns = row.map(\.columnName) }
                rows.values.append(values)
            }
        }
    }
}

/// The way to fail the request a connection's caller waits for, from the connection's close.
private final class WaitingRequest: Sendable {
    private let failure = Mutex<Callback<@Sendable (any Error) -> Void>?>(nil)

    func set(_ fail: (@Sendable (any Error) -> Void)?) {
        failure.withLock { $0 = fail.map(Callback.init) }
    }

    func fail(_ error: any Error) {
        failure.withLock { $0 }?.function(error)
    }
}

/// A COMMIT the server answered with ROLLBACK: an earlier statement had aborted the transaction.
struct PostgresRolledBack: Error, CustomStringConvertible {
    package var description: String { "the transaction was rolled back by the server" }
}
#endif
