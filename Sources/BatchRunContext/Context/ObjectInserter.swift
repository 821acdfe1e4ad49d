@_spi(BatchRunPackage) import BatchRunStore

/// Writes a save's inserted objects: runs of objects of one shape (entity and assigned
/// columns) with their keys go through the backend's `BulkLoader` (the same path an import
/// takes: multi-row `INSERT`s on SQLite, `COPY` or an `INSERT` of column arrays on
/// PostgreSQL), the others one row at a time; a run that meets a taken key or unique value is
/// written again row by row, where the merge policy resolves each collision. With `readBack`,
/// each object takes its row as stored, defaults and assigned rowids included.
package struct ObjectInserter {
    package let db: any StoreConnection
    let readBack: Bool
    private let backend: any StoreBackend
    /// One loader per entity, made when its first run of rows goes in.
    private var loaders: [String: any BulkLoader] = [:]
    /// The loaders' layouts: one number per entity and set of assigned columns.
    private var layouts: [Shape: Int] = [:]
    /// Single-row INSERTs, per entity and assigned columns.
    private var statements: [Shape: PreparedStatement] = [:]
    /// 0, 1, 2, ...: the rows of a chunk's batch, as the loader takes them.
    private var rowIndexes: [Int] = []

    /// Entity and assigned columns.
    private struct Shape: Hashable {
        var entity: String
        var columns: [Int]
    }

    /// The longest run of objects of one shape looked at before the loader cuts it.
    static let longestRun = 10_000

    package init(db: any StoreConnection, backend: any StoreBackend, readBack: Bool) {
        self.db = db
        self.backend = backend
        self.readBack = readBack
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
                while end < objects.count, end - start < Self.longestRun, objects[end].objectID != nil,
                      objects[end].assignedColumns == first.assignedColumns, objects[end].entity.name == first.entity.name {
                    end += 1
                }
                end = start + loader(for: first.entity).nextChunk(end - start, columns: first.assignedColumns.count)
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
    /// objects: the loader's chunks bound straight from their batch, a chunk that meets a taken
    /// key or unique value written again row by row as the objects those records stand for.
    mutating func insert(_ pending: PendingRecordRows, into changes: inout SaveChanges,
                         writer: (Entity) -> SaveWriter) throws {
        let entity = pending.entity
        if rowIndexes.count < pending.count { rowIndexes = Array(0..<pending.count) }
        var start = 0
        while start < pending.count {
            let rows = start..<start + loader(for: entity).nextChunk(pending.count - start, columns: pending.columns.count)
            start = rows.upperBound
            if rows.count > 1, try run(entity, pending.columns, rows: rows, of: pending.batch, returned: nil) {
                changes.record(contentsOf: rows.map(pending.id(of:)), entity: entity.name, .inserted)
                changes.inserted += rows.count
            } else {
                for object in pending.objects(rows) { try insertOne(object, into: &changes, writer: writer) }
            }
        }
        if entity.hasRowidKey { try db.advanceAssignedKeys(of: entity) }   // keys given: the store's next comes after them
    }

    /// One call of the loader; false (and nothing written) when a row collides.
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

    /// One call of the entity's loader with `rows` of `batch` (their `columns` of `entity`);
    /// false (and nothing written) when a row collides.
    private mutating func run(_ entity: Entity, _ columns: [Int], rows: Range<Int>, of batch: RowBatch,
                              returned: (([StoreValue]) -> Void)?) throws -> Bool {
        let loader = loader(for: entity)
        let shape = Shape(entity: entity.name, columns: columns)
        let layout = layouts[shape] ?? layouts.count
        layouts[shape] = layout
        if rowIndexes.count < rows.upperBound { rowIndexes = Array(0..<rows.upperBound) }
        let names = columns.map { entity.columns[$0].name }
        let outcome = if let returned {
            try loader.insertReturningRows(rowIndexes[rows], of: batch, layout: layout, columns: names, in: db, returned: returned)
        } else {
            try loader.insert(rowIndexes[rows], of: batch, layout: layout, columns: names, assigningKeys: false, in: db).outcome
        }
        switch outcome {
        case .done: return true
        case .keyTaken: return false
        case .refused(let failure): throw failure.error
        }
    }

    private mutating func loader(for entity: Entity) -> any BulkLoader {
        if let loader = loaders[entity.name] { return loader }
        let made = backend.makeBulkLoader(for: entity)
        loaders[entity.name] = made
        return made
    }

    /// One row: the fast INSERT, or on a collision the merge policy through `SaveWriter`.
    private mutating func insertOne(_ object: ManagedObject, into changes: inout SaveChanges,
                                    writer: (Entity) -> SaveWriter) throws {
        let entity = object.entity, assigned = object.assignedColumns
        let statement = try self.statement(entity, assigned)
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

    /// The single-row INSERT of `columns` of `entity`.
    private mutating func statement(_ entity: Entity, _ columns: [Int]) throws -> PreparedStatement {
        let shape = Shape(entity: entity.name, columns: columns)
        if let statement = statements[shape] { return statement }
        var sql = InsertSQL.insert(entity, columns: columns.map { entity.columns[$0].name }, rows: 1)
        if readBack {
            sql += " RETURNING \(SQL.quoteList(entity.columnNames))"
        } else if entity.hasRowidKey {
            sql += " RETURNING \(SQL.quote(entity.primaryKey[0]))"
        }
        let statement = try db.prepare(sql)
        statements[shape] = statement
        return statement
    }
}
