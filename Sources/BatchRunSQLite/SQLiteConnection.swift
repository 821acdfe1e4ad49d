@_spi(BatchRunPackage) import BatchRunStore
import GRDB
import GRDBSQLite

/// `StoreConnection` over GRDB's `Database`: statements batchrun prepared itself (`prepare`)
/// are bound and stepped through SQLite's C API, where building GRDB's arguments per row cost
/// a tenth of the time in profiles; statements run by their text go through GRDB's own cache
/// and API, so GRDB's cached statements are never changed behind its back.
///
/// ```swift
/// try backend.write(interruptedBy: nil) { connection in try connection.execute("DELETE FROM \"Session\"") }
/// ```
package final class SQLiteConnection: StoreConnection {
    package let db: Database

    package init(_ db: Database) {
        self.db = db
    }

    package var identity: ObjectIdentifier { ObjectIdentifier(db) }

    package var parameterLimit: Int { Int(sqlite3_limit(db.sqliteConnection, SQLITE_LIMIT_VARIABLE_NUMBER, -1)) }

    package var lastInsertedRowID: Int64 { db.lastInsertedRowID }

    package var changedRowCount: Int { db.changesCount }

    package func prepare(_ sql: String) throws -> PreparedStatement {
        PreparedStatement(sql: sql, native: try db.makeStatement(sql: sql))
    }

    package func inSavepoint<T>(_ body: () throws -> T) throws -> T {
        var result: T?
        try db.inSavepoint {
            result = try body()
            return .commit
        }
        return result!
    }

    package func valuesTable(of types: [ColumnType], rows: Int) -> ValuesTable {
        let tuple = "(" + Array(repeating: "?", count: types.count).joined(separator: ", ") + ")"
        return ValuesTable(sql: "(VALUES " + Array(repeating: tuple, count: rows).joined(separator: ", ") + ") AS v", arguments: { $0 })
    }

    /// Up to 500 rows, within the bound-parameter limit.
    package func valuesTableRows(columns: Int) -> Int {
        max(1, min(500, parameterLimit / max(columns, 1)))
    }

    package func advanceAssignedKeys(of entity: Entity) throws {}

    package func advanceAssignedKeys(of entity: Entity, past largest: Int64) throws {}

    package func tableExists(_ name: String) throws -> Bool {
        try db.tableExists(name)
    }

    package func columnNames(of table: String) throws -> Set<String> {
        guard try db.tableExists(table) else { return [] }
        return Set(try db.columns(in: table).map { $0.name.lowercased() })
    }

    package func createTable(_ entity: Entity) throws {
        for statement in SchemaSQL.statements(for: Model(entities: [entity])) { try db.execute(sql: statement) }
    }

    // MARK: Running prepared statements

    package func run(_ statement: PreparedStatement, rows: ArraySlice<Int>, of batch: RowBatch,
             returned: (([StoreValue]) -> Void)?) throws -> StatementOutcome {
        let handle = Self.handle(statement)
        sqlite3_reset(handle)
        var parameter: Int32 = 1
        for row in rows { parameter = Self.bind(batch, row: row, to: handle, from: parameter) }
        // Text and blobs are bound without a copy, and stay bound after the batch is gone; every
        // run binds every parameter again, so a step never reads a value of an earlier batch.
        precondition(parameter - 1 == sqlite3_bind_parameter_count(handle), "rows do not fill the statement")
        return try step(handle, sql: statement.sql, returned: returned)
    }

    package func run(_ statement: PreparedStatement, values: [StoreValue], returned: (([StoreValue]) -> Void)?) throws -> StatementOutcome {
        let handle = Self.handle(statement)
        sqlite3_reset(handle)
        // Everything that reads the rows or the error happens while the values are bound, and
        // the statement is reset before they go.
        return try Self.withBindings(values, from: 0, of: handle) {
            try step(handle, sql: statement.sql, returned: returned)
        }
    }

    package func forEachRow(_ statement: PreparedStatement, named: [String: StoreValue], positional: [StoreValue], split: Int,
                    assigned: [Int], _ body: (_ read: [StoreValue], _ changed: [StoreValue]) throws -> Void) throws {
        let handle = Self.handle(statement)
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        let count = sqlite3_bind_parameter_count(handle)
        if count > 0 {
            for index in 1...count {
                if let name = sqlite3_bind_parameter_name(handle, index) {
                    let parameter = String(String(cString: name).dropFirst())
                    guard let value = named[parameter] else { throw StoreError.missingParameter(parameter) }
                    try Self.bind(value, at: index, of: handle)
                } else if Int(index) <= positional.count {
                    try Self.bind(positional[Int(index) - 1], at: index, of: handle)
                }
            }
        }
        defer { sqlite3_reset(handle) }
        let first = Int32(min(split, Int(sqlite3_column_count(handle))))
        while true {
            let code = sqlite3_step(handle)
            if code == SQLITE_DONE { break }
            guard code == SQLITE_ROW else { throw error(code, sql: statement.sql) }
            var read: [StoreValue] = []
            read.reserveCapacity(Int(first))
            for column in 0..<first { read.append(Self.value(of: handle, at: column)) }
            if assigned.isEmpty {
                try body(read, read)
            } else {
                var changed = read
                for (offset, position) in assigned.enumerated() { changed[position] = Self.value(of: handle, at: first + Int32(offset)) }
                try body(read, changed)
            }
        }
    }

    package func readRows(_ statement: PreparedStatement, positional: [StoreValue], into batch: inout RowBatch) throws {
        let handle = Self.handle(statement)
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        for (offset, value) in positional.enumerated() { try Self.bind(value, at: Int32(offset + 1), of: handle) }
        defer { sqlite3_reset(handle) }
        let columns = sqlite3_column_count(handle)
        while true {
            let code = sqlite3_step(handle)
            if code == SQLITE_DONE { break }
            guard code == SQLITE_ROW else { throw error(code, sql: statement.sql) }
            batch.beginRow(line: 0, layout: 0)
            for column in 0..<columns {
                // One call for the column, then the value's own accessors: a third less than
                // asking the statement for the type and then the value.
                let value = sqlite3_column_value(handle, column)
                switch sqlite3_value_type(value) {
                case SQLITE_INTEGER: batch.appendInteger(sqlite3_value_int64(value))
                case SQLITE_FLOAT: batch.appendReal(sqlite3_value_double(value))
                case SQLITE_TEXT:
                    let bytes = sqlite3_value_text(value)
                    batch.appendText(UnsafeBufferPointer(start: bytes, count: Int(sqlite3_value_bytes(value))))
                case SQLITE_BLOB:
                    let bytes = sqlite3_value_blob(value)?.assumingMemoryBound(to: UInt8.self)
                    batch.appendBlob(UnsafeBufferPointer(start: bytes, count: Int(sqlite3_value_bytes(value))))
                default: batch.appendNull()
                }
            }
        }
    }

    // MARK: Running by text

    package func forEachRow(_ sql: String, _ arguments: SQLArguments, _ body: ([StoreValue]) throws -> Void) throws {
        let statement = try db.cachedStatement(sql: sql)
        let values = Self.arguments(arguments)
        if statement.columnCount == 0 {
            try statement.execute(arguments: values)
            return
        }
        let cursor = try Row.fetchCursor(statement, arguments: values)
        while let row = try cursor.next() {
            try body((0..<row.count).map { StoreValue(row[$0] as DatabaseValue) })
        }
    }

    package func namedRows(_ sql: String, _ arguments: SQLArguments) throws -> [NamedRow] {
        let statement = try db.cachedStatement(sql: sql)
        let positions = Dictionary(statement.columnNames.enumerated().map { ($1, $0) }) { first, _ in first }
        var rows: [NamedRow] = []
        let cursor = try Row.fetchCursor(statement, arguments: Self.arguments(arguments))
        while let row = try cursor.next() {
            rows.append(NamedRow(values: (0..<row.count).map { StoreValue(row[$0] as DatabaseValue) }, positions: positions))
        }
        return rows
    }

    package func onRollback(_ rolledBack: @escaping @Sendable () -> Void) {
        db.afterNextTransaction(onCommit: { _ in }, onRollback: { _ in rolledBack() })
    }

    private static func arguments(_ arguments: SQLArguments) -> StatementArguments {
        var values = StatementArguments(arguments.positional.map(\.databaseValue))
        if !arguments.named.isEmpty { values += StatementArguments(arguments.named.mapValues(\.databaseValue)) }
        return values
    }

    // MARK: SQLite's C API

    private static func handle(_ statement: PreparedStatement) -> OpaquePointer? {
        // Every PreparedStatement of this connection was made by `prepare` above.
        unsafeDowncast(statement.native, to: Statement.self).sqliteStatement
    }

    /// Steps a bound statement to its end, reading the rows it returns; resets it.
    private func step(_ handle: OpaquePointer?, sql: String, returned: (([StoreValue]) -> Void)?) throws -> StatementOutcome {
        defer { sqlite3_reset(handle) }
        var code = sqlite3_step(handle)
        while code == SQLITE_ROW {
            if let returned {
                returned((0..<sqlite3_column_count(handle)).map { Self.value(of: handle, at: $0) })
            }
            code = sqlite3_step(handle)
        }
        if code == SQLITE_DONE { return .done }
        let failure = error(code, sql: sql)
        if Self.stopsTheTransaction(code) { throw failure }
        let extended = sqlite3_extended_errcode(db.sqliteConnection)
        let refusal = StatementFailure(message: failure.message ?? "\(failure)", error: failure)
        return extended == Self.constraintPrimaryKey || extended == Self.constraintUnique ? .keyTaken(refusal) : .refused(refusal)
    }

    private func error(_ code: Int32, sql: String) -> DatabaseError {
        DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)), sql: sql)
    }

    /// SQLite's extended codes for a primary-key and a unique violation (macros Swift does not import).
    static let constraintPrimaryKey = SQLITE_CONSTRAINT | (6 << 8)
    static let constraintUnique = SQLITE_CONSTRAINT | (8 << 8)

    /// Failures that stop the transaction rather than refuse the rows: an interrupt, a busy
    /// or locked store, a full disk, a read-only store.
    static func stopsTheTransaction(_ code: Int32) -> Bool {
        [SQLITE_INTERRUPT, SQLITE_BUSY, SQLITE_LOCKED, SQLITE_FULL, SQLITE_READONLY].contains(code & 0xff)
    }

    /// Binds a row's cells to parameters from `first` on; returns the next parameter.
    /// Text and blobs are bound without a copy (`SQLITE_STATIC`): the batch outlives the step.
    private static func bind(_ batch: RowBatch, row: Int, to handle: OpaquePointer?, from first: Int32) -> Int32 {
        var parameter = first
        let range = batch.cells(of: row)
        batch.bytes.withUnsafeBufferPointer { bytes in
            batch.cells.withUnsafeBufferPointer { cells in
                for index in range {
                    let cell = cells[index]
                    switch cell.kind {
                    case .null: sqlite3_bind_null(handle, parameter)
                    case .integer: sqlite3_bind_int64(handle, parameter, cell.number)
                    case .real: sqlite3_bind_double(handle, parameter, Double(bitPattern: UInt64(bitPattern: cell.number)))
                    case .text:
                        sqlite3_bind_text(handle, parameter, UnsafeRawPointer(bytes.baseAddress! + Int(cell.number))
                            .assumingMemoryBound(to: CChar.self), cell.length, nil)   // SQLITE_STATIC
                    case .blob:
                        sqlite3_bind_blob(handle, parameter, bytes.baseAddress! + Int(cell.number), cell.length, nil)
                    }
                    parameter += 1
                }
            }
        }
        return parameter
    }

    /// Binds `values[offset...]` to parameters `offset + 1...` and runs `body` while they are
    /// bound. Text and blobs are bound without a copy (`SQLITE_STATIC`): each one's bytes stay
    /// valid for as long as its closure runs, which is until `body` has returned.
    private static func withBindings<T>(_ values: [StoreValue], from offset: Int, of handle: OpaquePointer?,
                                        _ body: () throws -> T) throws -> T {
        guard offset < values.count else { return try body() }
        let index = Int32(offset + 1)
        switch values[offset] {
        case .text(var text):
            return try text.withUTF8 { bytes in
                let code = bytes.isEmpty
                    ? sqlite3_bind_text(handle, index, "", 0, SQLITE_TRANSIENT)
                    : sqlite3_bind_text(handle, index, UnsafeRawPointer(bytes.baseAddress!).assumingMemoryBound(to: CChar.self),
                                        Int32(bytes.count), nil)   // SQLITE_STATIC
                guard code == SQLITE_OK else { throw DatabaseError(resultCode: ResultCode(rawValue: code), message: "cannot bind value \(index)") }
                defer { sqlite3_bind_null(handle, index) }   // the bytes go away with this closure
                return try withBindings(values, from: offset + 1, of: handle, body)
            }
        case .blob(let bytes):
            return try bytes.withUnsafeBytes { raw in
                let code = raw.isEmpty
                    ? sqlite3_bind_zeroblob(handle, index, 0)
                    : sqlite3_bind_blob(handle, index, raw.baseAddress!, Int32(raw.count), nil)   // SQLITE_STATIC
                guard code == SQLITE_OK else { throw DatabaseError(resultCode: ResultCode(rawValue: code), message: "cannot bind value \(index)") }
                defer { sqlite3_bind_null(handle, index) }
                return try withBindings(values, from: offset + 1, of: handle, body)
            }
        case let value:
            try bind(value, at: index, of: handle)
            return try withBindings(values, from: offset + 1, of: handle, body)
        }
    }

    package static func value(of handle: OpaquePointer?, at column: Int32) -> StoreValue {
        switch sqlite3_column_type(handle, column) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(handle, column))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(handle, column))
        case SQLITE_TEXT:
            let bytes = sqlite3_column_text(handle, column)!
            let length = Int(sqlite3_column_bytes(handle, column))
            return .text(String(decoding: UnsafeBufferPointer(start: bytes, count: length), as: UTF8.self))
        case SQLITE_BLOB:
            let length = Int(sqlite3_column_bytes(handle, column))
            guard length > 0, let bytes = sqlite3_column_blob(handle, column) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: bytes, count: length)))
        default: return .null
        }
    }

    private static func bind(_ value: StoreValue, at index: Int32, of handle: OpaquePointer?) throws {
        let code: Int32
        switch value {
        case .null: code = sqlite3_bind_null(handle, index)
        case .integer(let int): code = sqlite3_bind_int64(handle, index, int)
        case .real(let double): code = sqlite3_bind_double(handle, index, double)
        case .text(let text): code = sqlite3_bind_text(handle, index, text, -1, SQLITE_TRANSIENT)
        case .blob(let bytes):
            code = bytes.withUnsafeBytes { sqlite3_bind_blob(handle, index, $0.baseAddress, Int32($0.count), SQLITE_TRANSIENT) }
        }
        guard code == SQLITE_OK else { throw DatabaseError(resultCode: ResultCode(rawValue: code), message: "cannot bind value \(index)") }
    }
}

/// SQLite's "copy this value now" destructor, which Swift cannot import as a constant.
let SQLITE_TRANSIENT = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
