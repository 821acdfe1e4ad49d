import Foundation
import GRDB
import GRDBSQLite

/// Binds and steps a prepared GRDB statement through SQLite's C API: the save's hot loop
/// (one checked UPDATE or DELETE per row), where building `StatementArguments` per row cost
/// a tenth of the time in profiles.
///
/// Only statements batchrun prepared itself (`db.makeStatement`, kept in a `StatementCache`)
/// go through here: GRDB's cached statements stay GRDB's, so their state is never changed
/// behind its back.
enum RawStatement {
    /// Executes `statement` with positional values; returns the number of rows changed.
    static func execute(_ statement: Statement, in db: Database, binding values: [StoreValue]) throws -> Int {
        let handle = statement.sqliteStatement
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        for (offset, value) in values.enumerated() {
            try bind(value, at: Int32(offset + 1), of: handle)
        }
        let code = sqlite3_step(handle)
        sqlite3_reset(handle)
        guard code == SQLITE_DONE else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)),
                                sql: statement.sql)
        }
        return Int(sqlite3_changes(db.sqliteConnection))
    }

    /// How one step of an INSERT went: the row it returned (`RETURNING`), done, or a
    /// constraint violation on the primary key or a unique column (the statement is reset).
    enum InsertStep {
        case row([StoreValue])
        case done
        case constraint
    }

    /// Binds `values` at `positions` and steps an INSERT once, reading the `RETURNING` row when
    /// there is one. A constraint violation on a key is returned; any other failure throws.
    static func insert(_ statement: Statement, in db: Database, binding values: [StoreValue], at positions: [Int],
                       returning columns: Int) throws -> InsertStep {
        let handle = statement.sqliteStatement, connection = db.sqliteConnection
        sqlite3_reset(handle)
        // Everything that reads the row or the error happens while the values are bound, and
        // the statement is reset before they go.
        let outcome: Result<InsertStep, DatabaseError> = try withBindings(values, at: positions, from: 0, of: handle) {
            defer { sqlite3_reset(handle) }
            var code = sqlite3_step(handle)
            var row: [StoreValue]?
            if code == SQLITE_ROW {
                row = (0..<Int32(columns)).map { value(of: handle, at: $0) }
                code = sqlite3_step(handle)
            }
            if code == SQLITE_DONE { return .success(row.map(InsertStep.row) ?? .done) }
            let extended = sqlite3_extended_errcode(connection)
            if extended == SQLITE_CONSTRAINT | (6 << 8) || extended == SQLITE_CONSTRAINT | (8 << 8) { return .success(.constraint) }
            return .failure(DatabaseError(resultCode: ResultCode(rawValue: sqlite3_errcode(connection)),
                                          message: String(cString: sqlite3_errmsg(connection)), sql: statement.sql))
        }
        return try outcome.get()
    }

    /// Steps through the rows of `statement`, `:name` placeholders bound from `values`; each
    /// row is handed over as its first `split` columns (as read), and the same with the
    /// remaining columns written over the positions in `assigned` (the changes computed in
    /// the read). Without assignments both arrays are the same.
    static func forEachRow(_ statement: Statement, in db: Database, named values: [String: StoreValue] = [:],
                           positional: [StoreValue] = [], split: Int,
                           assigned: [Int], _ body: (_ read: [StoreValue], _ changed: [StoreValue]) throws -> Void) throws {
        let handle = statement.sqliteStatement
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        let count = sqlite3_bind_parameter_count(handle)
        if count > 0 {
            for index in 1...count {
                if let name = sqlite3_bind_parameter_name(handle, index) {
                    try bind(values[String(String(cString: name).dropFirst())] ?? .null, at: index, of: handle)
                } else if Int(index) <= positional.count {
                    try bind(positional[Int(index) - 1], at: index, of: handle)
                }
            }
        }
        defer { sqlite3_reset(handle) }
        let first = Int32(split)
        while true {
            let code = sqlite3_step(handle)
            if code == SQLITE_DONE { break }
            guard code == SQLITE_ROW else {
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)),
                                    sql: statement.sql)
            }
            var read: [StoreValue] = []
            read.reserveCapacity(split)
            for column in 0..<first { read.append(value(of: handle, at: column)) }
            if assigned.isEmpty {
                try body(read, read)
            } else {
                var changed = read
                for (offset, position) in assigned.enumerated() { changed[position] = value(of: handle, at: first + Int32(offset)) }
                try body(read, changed)
            }
        }
    }

    /// Binds `values[positions[offset...]]` to parameters `offset + 1...` and runs `body` while
    /// they are bound. Text and blobs are bound without a copy (`SQLITE_STATIC`): each one's
    /// bytes stay valid for as long as its closure runs, which is until `body` has returned.
    private static func withBindings<T>(_ values: [StoreValue], at positions: [Int], from offset: Int, of handle: OpaquePointer?,
                                        _ body: () -> T) throws -> T {
        guard offset < positions.count else { return body() }
        let index = Int32(offset + 1)
        switch values[positions[offset]] {
        case .text(var text):
            return try text.withUTF8 { bytes in
                let code = bytes.isEmpty
                    ? sqlite3_bind_text(handle, index, "", 0, SQLITE_TRANSIENT)
                    : sqlite3_bind_text(handle, index, UnsafeRawPointer(bytes.baseAddress!).assumingMemoryBound(to: CChar.self),
                                        Int32(bytes.count), nil)   // SQLITE_STATIC
                guard code == SQLITE_OK else { throw DatabaseError(resultCode: ResultCode(rawValue: code), message: "cannot bind value \(index)") }
                defer { sqlite3_bind_null(handle, index) }   // the bytes go away with this closure
                return try withBindings(values, at: positions, from: offset + 1, of: handle, body)
            }
        case .blob(let bytes):
            return try bytes.withUnsafeBytes { raw in
                let code = raw.isEmpty
                    ? sqlite3_bind_zeroblob(handle, index, 0)
                    : sqlite3_bind_blob(handle, index, raw.baseAddress!, Int32(raw.count), nil)   // SQLITE_STATIC
                guard code == SQLITE_OK else { throw DatabaseError(resultCode: ResultCode(rawValue: code), message: "cannot bind value \(index)") }
                defer { sqlite3_bind_null(handle, index) }
                return try withBindings(values, at: positions, from: offset + 1, of: handle, body)
            }
        case let value:
            try bind(value, at: index, of: handle)
            return try withBindings(values, at: positions, from: offset + 1, of: handle, body)
        }
    }

    static func value(of handle: OpaquePointer?, at column: Int32) -> StoreValue {
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

    static func bind(_ value: StoreValue, at index: Int32, of handle: OpaquePointer?) throws {
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

/// Statements batchrun prepared itself on one connection, for the length of one transaction.
final class StatementCache {
    private var statements: [String: Statement] = [:]

    func statement(_ sql: String, in db: Database) throws -> Statement {
        if let statement = statements[sql] { return statement }
        let statement = try db.makeStatement(sql: sql)
        statements[sql] = statement
        return statement
    }
}

/// SQL text built once per distinct key, for statements whose shape varies row to row.
final class SQLCache {
    private var texts: [[Int]: String] = [:]

    func sql(for key: [Int], _ build: () -> String) -> String {
        if let text = texts[key] { return text }
        let text = build()
        texts[key] = text
        return text
    }
}

/// SQLite's "copy this value now" destructor, which Swift cannot import as a constant.
let SQLITE_TRANSIENT = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
