import BatchRunStore

/// The one place merge policies are applied (JOBFILE.md section 6), whatever found the
/// conflict: an object save's checked update or delete (optimistic; batch-update and delete
/// steps save this way), an inserted object's or an imported row's taken key (constraint), one
/// row at a time here, or set-based for an import's batch (`ConflictResolver+Batch`). What each
/// policy does to a constraint conflict is decided once (`constraintWrite`, `constraintOutcome`)
/// for both ways of writing it.
///
/// ```swift
/// let resolver = ConflictResolver(db: db, store: store, entity: entity, policy: .objectTrump, job: "load",
///                                 readSequence: 0, recompute: nil)
/// let outcome = try resolver.resolveConstraint(columns: ["id", "status"], values: [.integer(7), .text("done")], existing: row)
/// ```
struct ConflictResolver {
    package let db: any StoreConnection
    package let store: Store
    package let entity: Entity
    package let policy: MergePolicy
    package let job: String
    /// The store's save number before the context read; later saves are "someone else".
    package let readSequence: UInt64
    package let recompute: RecomputeRule?

    private let table: String
    private let columnList: String
    private let keyMatch: String
    private let keyList: String

    package init(db: any StoreConnection, store: Store, entity: Entity, policy: MergePolicy, job: String, readSequence: UInt64,
         recompute: RecomputeRule?) {
        self.db = db
        self.store = store
        self.entity = entity
        self.policy = policy
        self.job = job
        self.readSequence = readSequence
        self.recompute = recompute
        table = SQL.quote(entity.tableName)
        columnList = SQL.quoteList(entity.columnNames)
        keyList = SQL.quoteList(entity.primaryKey)
        keyMatch = entity.primaryKey.enumerated().map { "\(SQL.quote($1)) = :_batchrun_k\($0)" }.joined(separator: " AND ")
    }

    // MARK: What a policy does to a constraint conflict

    /// How `policy` writes a row whose key or unique value is taken: every fed column
    /// (object-trump, recompute), the fed columns whose stored value is NULL (store-trump), the
    /// whole row (overwrite), or nothing (nil: rollback; `error` throws before writing).
    static func constraintWrite(_ policy: MergePolicy) -> BulkResolution? {
        switch policy {
        case .objectTrump, .recompute: return .ours
        case .storeTrump: return .fillNulls
        case .overwrite: return .replace
        case .rollback, .error: return nil
        }
    }

    /// The outcome of a constraint conflict `policy` resolved; `filled`: store-trump wrote a
    /// column (the store's row had a NULL where ours had a value).
    static func constraintOutcome(_ policy: MergePolicy, filled: Bool) -> MergeConflict.Outcome {
        switch policy {
        case .storeTrump: return filled ? .merged : .keptStore
        case .objectTrump, .recompute: return .keptOurs
        case .overwrite: return .overwritten
        case .rollback, .error: return .rolledBack
        }
    }

    /// True when a resolution wrote the row: only such an outcome names the row as changed.
    package static func wrote(_ outcome: MergeConflict.Outcome) -> Bool {
        outcome != .rolledBack && outcome != .keptStore
    }

    // MARK: Optimistic conflicts

    /// Resolves an object whose row changed (or went) since it was read: `deleting` for the
    /// object's delete. Returns the conflict and the rows an overwrite that re-created the row
    /// deleted for holding one of its unique values; under `error` throws the conflict.
    func resolveChangedRow(_ object: ManagedObject, id: ObjectID, deleting: Bool) throws -> (conflict: MergeConflict, deleted: [ObjectID]) {
        let original = object.snapshot!
        let ours: [StoreValue]? = deleting ? nil : object.values
        let current = try currentRow(id)
        var conflict = MergeConflict(job: job, objectID: id, kind: current == nil ? .deleted : .optimistic, policy: policy,
                                     outcome: .failed, changedBy: store.changeLog.lastWriter(of: id, after: readSequence) ?? MergeConflict.outsideThisRun,
                                     properties: [])
        // The properties that tell the story: what either side changed (for a row deleted in
        // the store, what this job changed; for this job's delete, what the store changed).
        let indexes = entity.columns.indices.filter { index in
            let storeChanged = current.map { $0[index] != original[index] } ?? false
            let oursChanged = ours.map { $0[index] != original[index] } ?? false
            return storeChanged || oursChanged
        }
        func properties(resolved: [StoreValue]?) -> [MergeConflict.Property] {
            indexes.map { .init(name: entity.columns[$0].name, original: original[$0], store: current?[$0],
                                ours: ours?[$0], resolved: resolved?[$0]) }
        }
        if policy == .error {
            conflict.properties = properties(resolved: current)
            throw MergeConflictError(conflict: conflict)
        }
        let oursChanged = Set(object.changedColumns)
        let storeChanged = Set(current.map { row in row.indices.filter { row[$0] != original[$0] } } ?? [])
        var deleted: [ObjectID] = []
        switch (policy, current, deleting) {
        case (_, nil, false):
            // Our update met a row deleted in the store: only overwrite brings it back.
            if policy == .overwrite {
                deleted = try replaceWhole(columns: entity.columnNames, values: object.values).deleted.filter { $0 != id }
                conflict.outcome = .overwritten
            } else {
                conflict.outcome = policy == .rollback ? .rolledBack : policy == .recompute ? .recomputed : .keptStore
            }
        case (.recompute, _?, false) where !(recompute?.assignments.isEmpty ?? true):
            try recomputeUpdate(id)
            conflict.outcome = .recomputed
        case (.objectTrump, _?, false), (.recompute, _?, false):
            // An object save has no expressions to evaluate again: recompute is object-trump.
            try write(columns: Array(oursChanged), values: object.values, id: id)
            conflict.outcome = storeChanged.isSubset(of: oursChanged) ? .keptOurs : .merged
        case (.storeTrump, _?, false):
            let mine = oursChanged.subtracting(storeChanged)
            try write(columns: Array(mine), values: object.values, id: id)
            conflict.outcome = mine.isEmpty ? .keptStore : .merged
        case (.overwrite, _?, false):
            try write(columns: Array(entity.columns.indices), values: object.values, id: id)
            conflict.outcome = .overwritten
        case (.rollback, _, _):
            conflict.outcome = .rolledBack
        case (.objectTrump, _?, true), (.overwrite, _?, true):
            try db.execute("DELETE FROM \(table) WHERE \(keyMatch)", keyArguments(id))
            conflict.outcome = policy == .overwrite ? .overwritten : .keptOurs
        case (.recompute, _?, true):
            try recomputeDelete(id)
            conflict.outcome = .recomputed
        case (.storeTrump, _?, true):
            conflict.outcome = .keptStore
        default:
            conflict.outcome = .keptStore
        }
        conflict.properties = properties(resolved: try currentRow(id))
        return (conflict, deleted)
    }

    // MARK: Constraint conflicts, one row

    /// Resolves a row of `columns` whose insert collided with `existing` (every column of the
    /// entity, as stored). Returns what it wrote and the conflict; under `error` throws it.
    /// Overwrite deletes every row holding the row's key or one of its unique values: the row
    /// written is new unless its key was one of them, and the others are deleted rows.
    func resolveConstraint(columns: [String], values: [StoreValue], existing: [StoreValue]) throws -> InsertOutcome {
        let id = ObjectID(entity: entity.name, key: ManagedObject.key(entity, existing))
        var conflict = MergeConflict(job: job, objectID: id, kind: .constraint, policy: policy, outcome: .failed,
                                     changedBy: store.changeLog.lastWriter(of: id) ?? MergeConflict.outsideThisRun, properties: [])
        let fed: [(index: Int, value: StoreValue)] = zip(columns, values).compactMap { name, value in
            entity.columns.firstIndex { $0.name == name }.map { ($0, value) }
        }
        func properties(resolved: [StoreValue]?) -> [MergeConflict.Property] {
            fed.filter { existing[$0.index] != $0.value }.map {
                .init(name: entity.columns[$0.index].name, original: nil, store: existing[$0.index], ours: $0.value,
                      resolved: resolved?[$0.index])
            }
        }
        if policy == .error {
            conflict.properties = properties(resolved: existing)
            throw MergeConflictError(conflict: conflict)
        }
        var full = existing
        for (index, value) in fed { full[index] = value }
        var filled = false
        var written = id, inserted = false, deleted: [ObjectID] = []
        switch Self.constraintWrite(policy) {
        case .fillNulls:
            let fill = fed.filter { existing[$0.index] == .null && $0.value != .null }.map(\.index)
            try write(columns: fill, values: full, id: id)
            filled = !fill.isEmpty
        case .ours:
            try write(columns: fed.map(\.index), values: full, id: id)
        case .replace:
            deleted = try deletedKeys("DELETE FROM \(table) WHERE \(keyMatch) RETURNING \(keyList)", keyArguments(id))
            let replaced = try replaceWhole(columns: columns, values: values)
            deleted += replaced.deleted
            written = replaced.written
            // A key deleted and written again is one updated row; the other rows are deleted.
            inserted = !deleted.contains(written)
            deleted.removeAll { $0 == written }
        case nil:
            break
        }
        conflict.outcome = Self.constraintOutcome(policy, filled: filled)
        conflict.properties = properties(resolved: try currentRow(written) ?? (policy == .overwrite ? full : nil))
        return InsertOutcome(id: Self.wrote(conflict.outcome) ? written : nil, inserted: inserted, deleted: deleted, conflict: conflict)
    }

    // MARK: Writing a resolution

    /// Sets `columns` (positions) of the row `id` to `values`, without a check: the resolution.
    private func write(columns: [Int], values: [StoreValue], id: ObjectID) throws {
        let columns = columns.filter { !entity.primaryKeyIndexes.contains($0) }.sorted()
        guard !columns.isEmpty else { return }
        // A NULL for a NOT NULL column with a default takes the default, as in an insert.
        let set = columns.map { index -> String in
            let column = entity.columns[index]
            if column.notNull, let literal = column.defaultLiteral {
                return "\(SQL.quote(column.name)) = coalesce(:_batchrun_v\(index), \(literal))"
            }
            return "\(SQL.quote(column.name)) = :_batchrun_v\(index)"
        }.joined(separator: ", ")
        var arguments = keyArguments(id)
        for index in columns { arguments.named["_batchrun_v\(index)"] = values[index] }
        try db.execute("UPDATE \(table) SET \(set) WHERE \(keyMatch)", arguments)
    }

    /// Inserts a row in place of every row that holds its key or one of its unique values
    /// (SQLite's `INSERT OR REPLACE`, in SQL both databases read). Returns the key written and
    /// the keys of the rows deleted (`RETURNING`: SQLite 3.35 and later, PostgreSQL).
    private func replaceWhole(columns: [String], values: [StoreValue]) throws -> (written: ObjectID, deleted: [ObjectID]) {
        var deleted: [ObjectID] = []
        for set in entity.uniqueColumnSets {
            let positions = set.compactMap { columns.firstIndex(of: $0) }
            guard positions.count == set.count, !positions.contains(where: { values[$0].isNull }) else { continue }
            let match = set.map { "\(SQL.quote($0)) = ?" }.joined(separator: " AND ")
            deleted += try deletedKeys("DELETE FROM \(table) WHERE \(match) RETURNING \(keyList)", SQLArguments(positions.map { values[$0] }))
        }
        var key: [StoreValue] = []
        try db.forEachRow(InsertSQL.insert(entity, columns: columns, rows: 1) + " RETURNING \(keyList)", SQLArguments(values)) { key = $0 }
        return (ObjectID(entity: entity.name, key: key), deleted)
    }

    /// Runs a `DELETE ... RETURNING` of the key columns; the keys of the rows it deleted.
    private func deletedKeys(_ sql: String, _ arguments: SQLArguments) throws -> [ObjectID] {
        var keys: [ObjectID] = []
        try db.forEachRow(sql, arguments) { keys.append(ObjectID(entity: entity.name, key: $0)) }
        return keys
    }

    private func recomputeUpdate(_ id: ObjectID) throws {
        guard let rule = recompute, !rule.assignments.isEmpty else { return }
        let set = rule.assignments.map { "\(SQL.quote($0.column)) = (\($0.expression))" }.joined(separator: ", ")
        var arguments = keyArguments(id)
        arguments.named.merge(rule.params) { key, _ in key }
        try db.execute("UPDATE \(table) SET \(set) WHERE \(keyMatch)", arguments)
    }

    private func recomputeDelete(_ id: ObjectID) throws {
        let filter = recompute?.deleteWhere.map { " AND (\($0))" } ?? ""
        var arguments = keyArguments(id)
        arguments.named.merge(recompute?.params ?? [:]) { key, _ in key }
        try db.execute("DELETE FROM \(table) WHERE \(keyMatch)\(filter)", arguments)
    }

    private func keyArguments(_ id: ObjectID) -> SQLArguments {
        var named: [String: StoreValue] = [:]
        for (index, value) in id.key.enumerated() { named["_batchrun_k\(index)"] = value }
        return SQLArguments(named: named)
    }

    /// The row as it is in the store now (inside this transaction), or nil when it is gone.
    func currentRow(_ id: ObjectID) throws -> [StoreValue]? {
        try db.rows("SELECT \(columnList) FROM \(table) WHERE \(keyMatch)", keyArguments(id)).first
    }
}
