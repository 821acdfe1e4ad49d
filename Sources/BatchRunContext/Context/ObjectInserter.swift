import BatchRunStore

/// Writes a save's inserted objects: objects of one shape (entity and assigned columns) with
/// their keys go in multi-row `INSERT`s of up to `rowsPerStatement` rows, the others one row at
/// a time; a chunk that meets a taken key or unique value is written again row by row, where
/// the merge policy resolves each collision. With `readBack`, each object takes its row as
/// stored (`RETURNING`), defaults and assigned rowids included.
package struct ObjectInserter {
    package let db: any StoreConnection
    let readBack: Bool
    private var statements: [Shape: PreparedStatement] = [:]
    /// 0, 1, 2, ...: the rows of a chunk's batch, as the connection takes them.
    private var rowIndexes: [Int] = []

    /// Entity, assigned columns and rows per statement: one prepared INSERT each.
    private struct Shape: Hashable {
        var entity: String
        var columns: [Int]
        var rows: Int
    }

    package init(db: any StoreConnection, readBack: Bool) {
        self.db = db
        self.readBack = readBack
    }

    /// The most rows one statement binds: SQLite's parameter limit allows more, but past about
    /// a hundred rows a statement gains nothing.
    package static func rowsPerStatement(columns: Int) -> Int {
        max(1, min(100, 32_766 / max(1, columns)))
    }

    package mutating func insert(_ objects: [ManagedObject], into changes: inout SaveChanges,
                         writer: (Entity) -> SaveWriter) throws {
        var start = 0
        var givenKeys: [String: Entity] = [:]   // entities whose integer keys some objects give
        while start < objects.count {
            let first = objects[start]
            var end = start + 1
            if first.objectID != nil, first.entity.hasRowidKey { givenKeys[first.entity.name] = first.entity }
            if first.objectID == nil, givenKeys.removeValue(forKey: first.entity.name) != nil {
                try db.advanceAssignedKeys(of: first.entity)   // its key comes after the keys given before it
            }
            if first.objectID != nil {
                let limit = Self.rowsPerStatement(columns: first.assignedColumns.count)
                while end < objects.count, end - start < limit, objects[end].objectID != nil,
                      objects[end].assignedColumns == first.assignedColumns, objects[end].entity.name == first.entity.name {
                    end += 1
                }
            }
            let chunk = objects[start..<end]
            if chunk.count > 1, try insertChunk(chunk) {
                changes.record(contentsOf: chunk.map { $0.objectID! }, entity: first.entity.name, .inserted)
                changes.inserted += chunk.count
            } else {
                for object in chunk { try insertOne(object, into: &changes, writer: writer) }
            }
            start = end
        }
        for entity in givenKeys.values { try db.advanceAssignedKeys(of: entity) }
    }

    /// Writes record inserts waiting as rows (`PendingRecordRows`, keys given) after the
    /// objects: multi-row INSERTs bound straight from their batch, a chunk that meets a taken
    /// key or unique value written again row by row as the objects those records stand for.
    mutating func insert(_ pending: PendingRecordRows, into changes: inout SaveChanges,
                         writer: (Entity) -> SaveWriter) throws {
        let entity = pending.entity
        let limit = Self.rowsPerStatement(columns: pending.columns.count)
        if rowIndexes.count < pending.count { rowIndexes = Array(0..<pending.count) }
        for start in stride(from: 0, to: pending.count, by: limit) {
            let rows = start..<min(start + limit, pending.count)
            if rows.count > 1, try run(entity, pending.columns, rows: rows, of: pending.batch, returned: nil) {
                changes.record(contentsOf: rows.map(pending.id(of:)), entity: entity.name, .inserted)
                changes.inserted += rows.count
            } else {
                for object in pending.objects(rows) { try insertOne(object, into: &changes, writer: writer) }
            }
        }
        if entity.hasRowidKey { try db.advanceAssignedKeys(of: entity) }   // keys given: the store's next comes after them
    }

    /// One multi-row INSERT; false (and nothing written) when a row collides.
    private mutating func insertChunk(_ chunk: ArraySlice<ManagedObject>) throws -> Bool {
        let first = chunk.first!, entity = first.entity, columns = first.assignedColumns
        var batch = RowBatch(rows: chunk.count, cellsPerRow: columns.count)
        for object in chunk {
            batch.beginRow(line: 0, layout: 0)
            for column in columns { batch.append(object.values[column]) }
        }
        var byKey: [ObjectID: ManagedObject] = [:]
        if readBack {
            byKey.reserveCapacity(chunk.count)
            for object in chunk { byKey[object.objectID!] = object }
        }
        return try run(entity, columns, rows: 0..<chunk.count, of: batch, returned: readBack ? { row in
            byKey[ObjectID(entity: entity.name, key: ManagedObject.key(entity, row))]?.values = row
        } : nil)
    }

    /// One multi-row INSERT of `rows` of `batch` (their `columns` of `entity`); false (and
    /// nothing written) when a row collides.
    private mutating func run(_ entity: Entity, _ columns: [Int], rows: Range<Int>, of batch: RowBatch,
                              returned: (([StoreValue]) -> Void)?) throws -> Bool {
        let statement = try self.statement(entity, columns, rows: rows.count)
        if rowIndexes.count < rows.upperBound { rowIndexes = Array(0..<rows.upperBound) }
        switch try db.run(statement, rows: rowIndexes[rows], of: batch, returned: returned) {
        case .done: return true
        case .keyTaken: return false
        case .refused(let failure): throw failure.error
        }
    }

    /// One row: the fast INSERT, or on a collision the merge policy through `SaveWriter`.
    private mutating func insertOne(_ object: ManagedObject, into changes: inout SaveChanges,
                                    writer: (Entity) -> SaveWriter) throws {
        let entity = object.entity, assigned = object.assignedColumns
        let statement = try self.statement(entity, assigned, rows: 1)
        // The row comes back whole with `readBack`, else the key alone for an integer key (which
        // the store assigns when the object leaves it out).
        var returned: [StoreValue]?
        switch try db.run(statement, values: assigned.map { object.values[$0] }, returned: { returned = $0 }) {
        case .done:
            if readBack, let returned { object.values = returned }
            let id = returned.map { readBack ? ObjectID(entity: entity.name, key: ManagedObject.key(entity, $0)) : ObjectID(entity: entity.name, key: $0) }
                ?? object.objectID ?? ObjectID(entity: entity.name, key: ManagedObject.key(entity, object.values))
            object.assignID(id)
            changes.record(id, .inserted)
            changes.inserted += 1
            return
        case .keyTaken:
            break   // the key or a unique column is taken: the merge policy decides
        case .refused(let failure):
            throw failure.error
        }
        let outcome = try writer(entity).insert(columns: assigned.map { entity.columns[$0].name },
                                                values: assigned.map { object.values[$0] })
        if let id = outcome.id {
            object.assignID(id)
            if readBack, let row = try writer(entity).currentRow(id) { object.values = row }
        }
        // The row written, and any row overwrite deleted for holding one of its unique values.
        outcome.record(in: &changes)
        if let conflict = outcome.conflict { changes.conflicts.append(conflict) }
    }

    private mutating func statement(_ entity: Entity, _ columns: [Int], rows: Int) throws -> PreparedStatement {
        let shape = Shape(entity: entity.name, columns: columns, rows: rows)
        if let statement = statements[shape] { return statement }
        var sql = InsertSQL.insert(entity, columns: columns.map { entity.columns[$0].name }, rows: rows)
        if readBack {
            sql += " RETURNING \(SQL.quoteList(entity.columnNames))"
        } else if rows == 1 && entity.hasRowidKey {
            sql += " RETURNING \(SQL.quote(entity.primaryKey[0]))"
        }
        let statement = try db.prepare(sql)
        statements[shape] = statement
        return statement
    }
}
