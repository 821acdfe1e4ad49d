import GRDB
import GRDBSQLite

/// Writes a save's inserted objects: objects of one shape (entity and assigned columns) with
/// their keys go in multi-row `INSERT`s of up to `rowsPerStatement` rows, the others one row at
/// a time; a chunk that meets a taken key or unique value is written again row by row, where
/// the merge policy resolves each collision. With `readBack`, each object takes its row as
/// stored (`RETURNING`), defaults and assigned rowids included.
struct ObjectInserter {
    let db: Database
    let readBack: Bool
    private var statements: [Shape: Statement] = [:]

    /// Entity, assigned columns and rows per statement: one prepared INSERT each.
    private struct Shape: Hashable {
        var entity: String
        var columns: [Int]
        var rows: Int
    }

    init(db: Database, readBack: Bool) {
        self.db = db
        self.readBack = readBack
    }

    /// The most rows one statement binds: SQLite's parameter limit allows more, but past about
    /// a hundred rows a statement gains nothing.
    static func rowsPerStatement(columns: Int) -> Int {
        max(1, min(100, 32_766 / max(1, columns)))
    }

    mutating func insert(_ objects: [ManagedObject], into changes: inout SaveChanges,
                         writer: (Entity) -> SaveWriter) throws {
        var start = 0
        while start < objects.count {
            let first = objects[start]
            var end = start + 1
            if first.objectID != nil {
                let limit = Self.rowsPerStatement(columns: first.assignedColumns.count)
                while end < objects.count, end - start < limit, objects[end].objectID != nil,
                      objects[end].assignedColumns == first.assignedColumns, objects[end].entity.name == first.entity.name {
                    end += 1
                }
            }
            let chunk = objects[start..<end]
            if chunk.count > 1, try insertChunk(chunk) {
                for object in chunk { changes.record(object.objectID!, .inserted) }
                changes.inserted += chunk.count
            } else {
                for object in chunk { try insertOne(object, into: &changes, writer: writer) }
            }
            start = end
        }
    }

    /// One multi-row INSERT; false (and nothing written) when a row collides.
    private mutating func insertChunk(_ chunk: ArraySlice<ManagedObject>) throws -> Bool {
        let first = chunk.first!, entity = first.entity, columns = first.assignedColumns
        let statement = try self.statement(entity, columns, rows: chunk.count)
        let handle = statement.sqliteStatement
        sqlite3_reset(handle)
        // Numbers are bound at once; text and blobs are copied into one buffer that outlives
        // the step, and bound from it.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(chunk.count * columns.count * 16)
        var spans: [(parameter: Int32, offset: Int, count: Int, isText: Bool)] = []
        var parameter: Int32 = 1
        for object in chunk {
            for column in columns {
                switch object.values[column] {
                case .text(let text):
                    spans.append((parameter, bytes.count, text.utf8.count, true))
                    bytes.append(contentsOf: text.utf8)
                case .blob(let blob):
                    spans.append((parameter, bytes.count, blob.count, false))
                    bytes.append(contentsOf: blob)
                case .integer(let value):
                    sqlite3_bind_int64(handle, parameter, value)
                case .real(let value):
                    sqlite3_bind_double(handle, parameter, value)
                case .null:
                    sqlite3_bind_null(handle, parameter)
                }
                parameter += 1
            }
        }
        bytes.append(0)   // a valid address for empty values
        // The step, the rows it returns and its error are read, and the statement reset, while
        // the buffer the values are bound from is alive.
        let (code, extended): (Int32, Int32) = bytes.withUnsafeBufferPointer { buffer in
            defer { sqlite3_reset(handle) }
            let base = UnsafeRawPointer(buffer.baseAddress!)
            for span in spans {
                if span.isText {
                    sqlite3_bind_text(handle, span.parameter, (base + span.offset).assumingMemoryBound(to: CChar.self), Int32(span.count), nil)
                } else {
                    sqlite3_bind_blob(handle, span.parameter, base + span.offset, Int32(span.count), nil)
                }
            }
            var code = sqlite3_step(handle)
            if readBack {
                var byKey: [ObjectID: ManagedObject] = [:]
                for object in chunk { byKey[object.objectID!] = object }
                while code == SQLITE_ROW {
                    let row = (0..<Int32(entity.columns.count)).map { RawStatement.value(of: handle, at: $0) }
                    byKey[ObjectID(entity: entity.name, key: ManagedObject.key(entity, row))]?.values = row
                    code = sqlite3_step(handle)
                }
            }
            return (code, sqlite3_extended_errcode(db.sqliteConnection))
        }
        if code == SQLITE_DONE { return true }
        if extended == SQLITE_CONSTRAINT | (6 << 8) || extended == SQLITE_CONSTRAINT | (8 << 8) { return false }
        throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)),
                            sql: statement.sql)
    }

    /// One row: the fast INSERT, or on a collision the merge policy through `SaveWriter`.
    private mutating func insertOne(_ object: ManagedObject, into changes: inout SaveChanges,
                                    writer: (Entity) -> SaveWriter) throws {
        let entity = object.entity, assigned = object.assignedColumns
        let statement = try self.statement(entity, assigned, rows: 1)
        switch try RawStatement.insert(statement, in: db, binding: object.values, at: assigned,
                                       returning: readBack ? entity.columns.count : 0) {
        case .row(let row):
            object.values = row
            let id = ObjectID(entity: entity.name, key: ManagedObject.key(entity, row))
            object.assignID(id)
            changes.record(id, .inserted)
            changes.inserted += 1
            return
        case .done:
            let id = object.objectID ?? ObjectID(entity: entity.name, single: .integer(db.lastInsertedRowID))
            object.assignID(id)
            changes.record(id, .inserted)
            changes.inserted += 1
            return
        case .constraint:
            break   // the key or a unique column is taken: the merge policy decides
        }
        let outcome = try writer(entity).insert(columns: assigned.map { entity.columns[$0].name },
                                                values: assigned.map { object.values[$0].databaseValue })
        if let id = outcome.id {
            object.assignID(id)
            if readBack, let row = try writer(entity).currentRow(id) { object.values = row }
            if outcome.inserted {
                changes.record(id, .inserted)
                changes.inserted += 1
            } else {
                changes.record(id, .updated)
                changes.updated += 1
            }
        }
        if let conflict = outcome.conflict { changes.conflicts.append(conflict) }
    }

    private mutating func statement(_ entity: Entity, _ columns: [Int], rows: Int) throws -> Statement {
        let shape = Shape(entity: entity.name, columns: columns, rows: rows)
        if let statement = statements[shape] { return statement }
        var sql = SaveWriter.insertSQL(entity: entity, columns: columns.map { entity.columns[$0].name })
        if rows > 1 {
            let values = sql[sql.range(of: " VALUES ")!.upperBound...]
            sql += String(repeating: ", " + values, count: rows - 1)
        }
        if readBack { sql += " RETURNING \(SQL.quoteList(entity.columnNames))" }
        let statement = try db.makeStatement(sql: sql)
        statements[shape] = statement
        return statement
    }
}
