import BatchRunStore

/// Writes one context's changes to one entity inside a save's transaction: each update and
/// delete checked against the values the context read, each insert checked for constraint
/// conflicts; every conflict goes to the `ConflictResolver`, which applies the merge policy.
package struct SaveWriter {
    /// Applies the merge policy to the rows that conflict; it holds what the save writes with.
    let resolver: ConflictResolver
    package var db: any StoreConnection { resolver.db }
    package var store: Store { resolver.store }
    package var entity: Entity { resolver.entity }
    package var policy: MergePolicy { resolver.policy }
    package var job: String { resolver.job }

    private let table: String
    private let columnList: String
    /// The optimistic check: the key finds the row (by index), every other column is as read.
    private let checkClause: String
    /// Column positions in the order `checkClause` binds them: key columns, then the others.
    private let checkOrder: [Int]
    /// Checks of objects record updates alone changed (key and those columns), by columns.
    private let checkClauses = SQLCache()
    /// UPDATE statements by the set of columns they change, built once per save.
    private let updateSQL = SQLCache()
    /// The statements of the hot loop, prepared once per save.
    private let statements = StatementCache()
    package init(db: any StoreConnection, store: Store, entity: Entity, policy: MergePolicy, job: String, readSequence: UInt64,
         recompute: RecomputeRule?) {
        resolver = ConflictResolver(db: db, store: store, entity: entity, policy: policy, job: job, readSequence: readSequence,
                                    recompute: recompute)
        table = SQL.quote(entity.tableName)
        columnList = SQL.quoteList(entity.columnNames)
        let keys = entity.primaryKeyIndexes
        let others = entity.columns.indices.filter { !keys.contains($0) }
        checkOrder = keys + others
        checkClause = (keys.map { "\(SQL.quote(entity.columns[$0].name)) = ?" } + others.map { "\(SQL.quote(entity.columns[$0].name)) IS NOT DISTINCT FROM ?" })
            .joined(separator: " AND ")
    }

    // MARK: Updates and deletes

    /// The columns checked for `object`, in the order they bind: the key, then every other
    /// column, or only those record updates changed (`ManagedObject.checkedColumns`).
    private func checked(_ object: ManagedObject) -> [Int] {
        guard let columns = object.checkedColumns else { return checkOrder }
        let keys = entity.primaryKeyIndexes
        return keys + columns.filter { !keys.contains($0) }
    }

    /// The WHERE clause checking `columns` (from `checked`) against positional values.
    private func clause(checking columns: [Int]) -> String {
        if columns == checkOrder { return checkClause }
        return checkClauses.sql(for: columns) {
            let keyCount = entity.primaryKey.count
            return columns.enumerated().map { offset, index in
                "\(SQL.quote(entity.columns[index].name)) \(offset < keyCount ? "=" : "IS NOT DISTINCT FROM") ?"
            }.joined(separator: " AND ")
        }
    }

    /// Saves an updated object; returns the conflict if the row changed since it was read (for
    /// an object only record updates changed, if one of their columns did), with the rows an
    /// overwrite deleted for holding one of the row's unique values (`resolveChangedRow`).
    package func update(_ object: ManagedObject) throws -> (conflict: MergeConflict, deleted: [ObjectID])? {
        guard let snapshot = object.snapshot, let id = object.objectID else { return nil }
        let changed = object.changedColumns
        if changed.isEmpty { return nil }
        let check = checked(object)
        let key = check == checkOrder ? changed : changed + [Int.min] + check
        let sql = updateSQL.sql(for: key) {
            "UPDATE \(table) SET " + changed.map { "\(SQL.quote(entity.columns[$0].name)) = ?" }.joined(separator: ", ")
                + " WHERE \(clause(checking: check))"
        }
        let statement = try statements.statement(sql, in: db)
        if try changes(statement, changed.map { object.values[$0] } + check.map { snapshot[$0] }) > 0 {
            return nil
        }
        return try resolver.resolveChangedRow(object, id: id, deleting: false)
    }

    /// Saves updated objects with set-based statements, each row checked against the values
    /// its object read: `UPDATE t SET c = v.cN FROM (VALUES (key, read values, new values), ...)
    /// AS v WHERE t.key = v.key AND every column IS as read RETURNING key`. Returns the IDs
    /// written and the objects whose row changed since the read (for `update(_:)`, one by one).
    func updateChecked(_ objects: [ManagedObject]) throws -> (written: [ObjectID], changed: [ManagedObject]) {
        if objects.allSatisfy({ $0.checkedColumns == nil }) { return try updateChecked(objects, checking: checkOrder) }
        // Objects only record updates changed are checked on their columns: one group per set.
        var written: [ObjectID] = [], changed: [ManagedObject] = []
        for group in Dictionary(grouping: objects, by: { checked($0) }).values {
            let result = try updateChecked(group, checking: checked(group[0]))
            written += result.written
            changed += result.changed
        }
        return (written, changed)
    }

    /// `updateChecked` of objects that all check `check` (positions, the key first).
    private func updateChecked(_ objects: [ManagedObject], checking check: [Int]) throws -> (written: [ObjectID], changed: [ManagedObject]) {
        var set = Set<Int>()
        for object in objects { set.formUnion(object.changedColumns) }
        let changedColumns = set.sorted()
        guard !changedColumns.isEmpty else { return (objects.compactMap(\.objectID), []) }
        let width = check.count + changedColumns.count
        let perStatement = db.valuesTableRows(columns: width)
        var written: [ObjectID] = []
        written.reserveCapacity(objects.count)
        var returned = Set<ObjectID>(minimumCapacity: objects.count)
        var start = 0
        while start < objects.count {
            let chunk = objects[start..<min(start + perStatement, objects.count)]
            let (sql, table) = checkedUpdateSQL(set: changedColumns, rows: chunk.count, checking: check)
            let statement = try statements.statement(sql, in: db)
            var values: [StoreValue] = []
            values.reserveCapacity(chunk.count * width)
            for object in chunk {
                values += check.map { object.snapshot![$0] }
                values += changedColumns.map { object.values[$0] }
            }
            try db.forEachRow(statement, named: [:], positional: table.arguments(values), split: entity.primaryKey.count, assigned: []) { key, _ in
                let id = ObjectID(entity: entity.name, key: key)
                written.append(id)
                returned.insert(id)
            }
            start += chunk.count
        }
        let changed = written.count == objects.count ? [] : objects.filter { !returned.contains($0.objectID!) }
        return (written, changed)
    }

    private func checkedUpdateSQL(set columns: [Int], rows: Int, checking check: [Int]) -> (sql: String, table: ValuesTable) {
        // v's columns: the checked ones (key columns first), then the new values.
        let source = db.valuesTable(of: (check + columns).map { entity.columns[$0].type }, rows: rows)
        let key = check == checkOrder ? [-rows] + columns : [-rows] + columns + [Int.min] + check
        let sql = updateSQL.sql(for: key) {
            let assignments = columns.enumerated().map { offset, index in
                "\(SQL.quote(entity.columns[index].name)) = v.column\(check.count + offset + 1)"
            }
            let keyCount = entity.primaryKey.count
            let checks = check.enumerated().map { offset, index in
                "\(table).\(SQL.quote(entity.columns[index].name)) \(offset < keyCount ? "=" : "IS NOT DISTINCT FROM") v.column\(offset + 1)"
            }
            return "UPDATE \(table) SET \(assignments.joined(separator: ", ")) FROM \(source.sql) WHERE "
                + checks.joined(separator: " AND ") + " RETURNING " + entity.primaryKey.map { "\(table).\(SQL.quote($0))" }.joined(separator: ", ")
        }
        return (sql, source)
    }

    /// Saves a deleted object; returns whether the row is gone and the conflict if the row
    /// changed since it was read. A row already gone is no conflict: both wanted it gone.
    package func delete(_ object: ManagedObject) throws -> (deleted: Bool, conflict: MergeConflict?) {
        guard let snapshot = object.snapshot, let id = object.objectID else { return (false, nil) }
        let statement = try statements.statement("DELETE FROM \(table) WHERE \(checkClause)", in: db)
        if try changes(statement, checkOrder.map { snapshot[$0] }) > 0 { return (true, nil) }
        if try currentRow(id) == nil { return (false, nil) }
        let conflict = try resolver.resolveChangedRow(object, id: id, deleting: true).conflict   // a delete replaces nothing
        return (try currentRow(id) == nil, conflict)
    }

    /// Runs a checked statement; the rows it changed.
    private func changes(_ statement: PreparedStatement, _ values: [StoreValue]) throws -> Int {
        try db.run(statement, values: values, returned: nil).check()
        return db.changedRowCount
    }

    /// The row as it is in the store now (inside this transaction), or nil when it is gone.
    func currentRow(_ id: ObjectID) throws -> [StoreValue]? {
        try resolver.currentRow(id)
    }

    // MARK: Inserts

    /// Inserts a row of `columns`; a collision with an existing row on the primary key or a
    /// unique constraint is resolved by the policy (`ConflictResolver.resolveConstraint`).
    package func insert(columns: [String], values: [StoreValue]) throws -> InsertOutcome {
        // A key the store assigns comes back with RETURNING.
        let assigning = entity.hasRowidKey && (columns.firstIndex(of: entity.primaryKey[0]).map { values[$0].isNull } ?? true)
        let sql = InsertSQL.insert(entity, columns: columns, rows: 1) + (assigning ? " RETURNING \(SQL.quote(entity.primaryKey[0]))" : "")
        var assigned: StoreValue?
        switch try db.run(try statements.statement(sql, in: db), values: values, returned: assigning ? { assigned = $0.first } : nil) {
        case .done:
            if let assigned { return InsertOutcome(id: ObjectID(entity: entity.name, single: assigned), inserted: true) }
            return InsertOutcome(id: insertedID(columns: columns, values: values), inserted: true)
        case .keyTaken(let failure):
            guard let existing = try existingRow(columns: columns, values: values) else { throw failure.error }
            return try resolver.resolveConstraint(columns: columns, values: values, existing: existing)
        case .refused(let failure):
            throw failure.error
        }
    }

    private func insertedID(columns: [String], values: [StoreValue]) -> ObjectID {
        return ObjectID(entity: entity.name, key: entity.primaryKey.map { name in
            columns.firstIndex(of: name).map { values[$0] } ?? .null
        })
    }

    /// The row an insert collided with: by primary key first, then each unique column set.
    private func existingRow(columns: [String], values: [StoreValue]) throws -> [StoreValue]? {
        for set in entity.uniqueColumnSets {
            let positions = set.compactMap { columns.firstIndex(of: $0) }
            guard positions.count == set.count, !positions.contains(where: { values[$0].isNull }) else { continue }
            let match = set.map { "\(SQL.quote($0)) = ?" }.joined(separator: " AND ")
            if let row = try db.rows("SELECT \(columnList) FROM \(table) WHERE \(match)", SQLArguments(positions.map { values[$0] })).first {
                return row
            }
        }
        return nil
    }
}
