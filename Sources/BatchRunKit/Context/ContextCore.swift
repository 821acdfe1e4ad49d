import Foundation
import GRDB

/// The change tracking behind `Context` and `MainContext`: registered objects with their
/// snapshots, pending inserts, updates and deletes, save, rollback, reset and merge.
/// Not Sendable: it lives inside the isolation of the context that owns it.
final class ContextCore {
    let store: Store
    let name: String
    var mergePolicy: MergePolicy
    /// Expressions `recompute` evaluates again on a conflicting row, per entity.
    var recomputeRules: [String: RecomputeRule] = [:]
    /// Called after every successful save (Core Data's per-save notification for this context).
    var didSaveBlock: (@Sendable (SaveResult) -> Void)?

    private var registered: [ObjectID: ManagedObject] = [:]
    private var inserted: [ManagedObject] = []
    /// The store's save number before the first read since the last save: saves after it are
    /// someone else's, for naming who changed a conflicting row.
    private var readSequence: UInt64?
    /// The store's change generation before the first read since the last save.
    private var readGeneration: UInt64?
    /// Set while `atomically` runs: every read and save goes through this one transaction.
    private var transaction: Database?
    private var pendingDidSaves: [DidSave] = []

    /// Interrupts this context's statement in flight when its work is cancelled.
    let interrupter = Interrupter()

    init(store: Store, name: String, mergePolicy: MergePolicy) {
        self.store = store
        self.name = name
        self.mergePolicy = mergePolicy
    }

    func atomically<T>(_ body: () throws -> T) throws -> T {
        pendingDidSaves = []
        let result: T = try store.writer().write { db in
            try interrupter.running(on: db.sqliteConnection) {
                self.transaction = db
                defer { self.transaction = nil }
                return try body()
            }
        }
        let saves = pendingDidSaves
        pendingDidSaves = []
        for save in saves { store.didCommit(save) }
        return result
    }

    // MARK: Reading

    /// Fetches rows as objects. An object already registered with unsaved changes keeps them.
    func fetch(_ request: FetchRequest) throws -> [ManagedObject] {
        guard let entity = store.model[request.entity] else { throw ContextError.unknownEntity(request.entity) }
        if readSequence == nil {
            readSequence = store.saveSequence
            readGeneration = store.changeGeneration
        }
        let sql = request.sql(for: entity)
        let arguments = request.arguments()
        let keyIndexes = entity.primaryKeyIndexes
        let assigned = try request.assigning.map { assignment in
            guard let index = entity.columns.firstIndex(where: { $0.name == assignment.column }) else {
                throw ContextError.unknownColumn(entity.name, assignment.column)
            }
            return index
        }
        if let limit = request.limit { registered.reserveCapacity(registered.count + limit) }
        return try read { db in
            var objects: [ManagedObject] = []
            objects.reserveCapacity(request.limit ?? 0)
            try RawStatement.forEachRow(try db.cachedStatement(sql: sql), in: db, named: arguments,
                                        split: entity.columns.count, assigned: assigned) { values, changed in
                let id = keyIndexes.count == 1 ? ObjectID(entity: entity.name, single: values[keyIndexes[0]])
                                               : ObjectID(entity: entity.name, key: keyIndexes.map { values[$0] })
                if let existing = registered[id] {
                    if !existing.hasChanges { existing.refresh(with: values) }
                    if !assigned.isEmpty { existing.assign(changed, columns: assigned) }
                    objects.append(existing)
                } else {
                    let object = ManagedObject(entity: entity, values: changed, snapshot: values, id: id,
                                               changed: !assigned.isEmpty)
                    registered[id] = object
                    objects.append(object)
                }
            }
            return objects
        }
    }

    /// The registered object with this ID, fetched from the store if it is not registered.
    func existingObject(with id: ObjectID) throws -> ManagedObject? {
        if let object = registered[id] { return object }
        guard let entity = store.model[id.entity] else { throw ContextError.unknownEntity(id.entity) }
        var request = FetchRequest(entity: id.entity)
        let match = entity.primaryKey.enumerated().map { "\(SQL.quote($1)) IS :_batchrun_id\($0)" }.joined(separator: " AND ")
        request.whereClause = match
        for (index, value) in id.key.enumerated() { request.params["_batchrun_id\(index)"] = value }
        return try fetch(request).first
    }

    /// Reads from a snapshot, or inside the transaction of `atomically`.
    func read<T>(_ body: (Database) throws -> T) throws -> T {
        if let transaction { return try body(transaction) }
        return try store.pool.read { db in try interrupter.running(on: db.sqliteConnection) { try body(db) } }
    }

    /// Runs one batch of raw writes in its own transaction (a savepoint inside `atomically`),
    /// then posts the `DidSave` that `body` describes once the batch is committed.
    func write<T>(_ body: (Database) throws -> (T, DidSave?)) throws -> T {
        if let transaction {
            var outcome: (T, DidSave?)?
            try transaction.inSavepoint {
                outcome = try body(transaction)
                return .commit
            }
            if let save = outcome!.1 { pendingDidSaves.append(save) }
            return outcome!.0
        }
        let (value, save) = try store.writer().write { db in try interrupter.running(on: db.sqliteConnection) { try body(db) } }
        if let save {
            store.didCommit(save)
            var result = SaveResult(didSave: save)
            result.inserted = save.inserted.values.map(\.count).reduce(0, +)
            result.updated = save.updated.values.map(\.count).reduce(0, +)
            result.deleted = save.deleted.values.map(\.count).reduce(0, +)
            didSaveBlock?(result)
        }
        return value
    }

    // MARK: Changing

    /// A new object, saved with the next `save()`.
    func insert(into entityName: String, values: [String: StoreValue]) throws -> ManagedObject {
        guard let entity = store.model[entityName] else { throw ContextError.unknownEntity(entityName) }
        let object = ManagedObject(entity: entity, values: Array(repeating: .null, count: entity.columns.count), snapshot: nil)
        for (column, value) in values {
            guard object.index(of: column) != nil else { throw ContextError.unknownColumn(entityName, column) }
            object[column] = value
        }
        inserted.append(object)
        return object
    }

    /// Marks an object deleted; the row goes with the next `save()`.
    func delete(_ object: ManagedObject) {
        if object.snapshot == nil {
            inserted.removeAll { $0 === object }
        } else {
            object.isDeleted = true
        }
    }

    var hasChanges: Bool {
        !inserted.isEmpty || registered.values.contains { $0.hasChanges }
    }

    /// Every object the context holds.
    var registeredObjects: [ManagedObject] { Array(registered.values) + inserted }

    /// Discards every unsaved change: values go back to their snapshots, inserts are dropped.
    func rollback() {
        inserted.removeAll()
        for object in registered.values {
            object.isDeleted = false
            if let snapshot = object.snapshot { object.values = snapshot }
        }
    }

    /// Forgets every object (changes included), as a fresh context.
    func reset() {
        inserted.removeAll()
        registered.removeAll()
        readSequence = nil
        readGeneration = nil
    }

    // MARK: Saving

    /// Writes every change in one transaction, each update and delete checked against the
    /// values read. Conflicts are resolved by `mergePolicy`; under `error` the first one throws
    /// `MergeConflictError`, nothing is written, and the context keeps its changes.
    /// `forgetting`: the caller resets right after, so saved objects need no new snapshots.
    func save(bulk: BulkChange? = nil, forgetting: Bool = false) throws -> SaveResult {
        guard hasChanges else { return SaveResult() }
        let objects = registered.values.filter { $0.hasChanges }
        let inserts = inserted
        let readSequence = self.readSequence ?? store.saveSequence
        let readGeneration = self.readGeneration
        let work = { (db: Database) throws -> SaveResult in
            if let bulk, inserts.isEmpty, let readGeneration, try self.store.isUnchanged(since: readGeneration, in: db) {
                return try self.writeBulk(bulk, changes: objects, in: db)
            }
            return try self.write(inserts: inserts, changes: objects, in: db, readSequence: readSequence)
        }
        let result: SaveResult
        if let transaction {
            var saved: SaveResult?
            try transaction.inSavepoint {
                saved = try work(transaction)
                return .commit
            }
            result = saved!
            if let save = result.didSave { pendingDidSaves.append(save) }
        } else {
            result = try store.writer().write { db in try interrupter.running(on: db.sqliteConnection) { try work(db) } }
            if let save = result.didSave { store.didCommit(save) }
        }
        if forgetting {
            reset()
        } else {
            afterSave(inserts: inserts, changes: objects, conflicts: result.conflicts)
        }
        didSaveBlock?(result)
        return result
    }

    /// The fast save: nothing was committed since the read, so no row can conflict and the
    /// batch's set-based statement changes exactly the objects' rows.
    private func writeBulk(_ bulk: BulkChange, changes: [ManagedObject], in db: Database) throws -> SaveResult {
        try db.execute(sql: bulk.sql, arguments: bulk.params.statementArguments)
        var result = SaveResult()
        var updated = IDsByEntity(), deleted = IDsByEntity()
        if let entity = changes.first?.entity.name, changes.allSatisfy({ $0.entity.name == entity && !$0.isDeleted })
            || changes.allSatisfy({ $0.entity.name == changes.first?.entity.name && $0.isDeleted }) {
            // One entity, one kind of change: the usual batch, gathered in one pass.
            let ids = changes.compactMap(\.objectID)
            if changes.first?.isDeleted == true { deleted.append(contentsOf: ids) } else { updated.append(contentsOf: ids) }
        } else {
            for object in changes {
                guard let id = object.objectID else { continue }
                if object.isDeleted { deleted.append(id) } else { updated.append(id) }
            }
        }
        result.deleted = deleted.count
        result.updated = db.changesCount - result.deleted
        result.didSave = DidSave(sequence: store.nextSaveSequence(), savedBy: name, updated: updated.dictionary,
                                 deleted: deleted.dictionary)
        return result
    }

    private func write(inserts: [ManagedObject], changes: [ManagedObject], in db: Database, readSequence: UInt64) throws -> SaveResult {
        var result = SaveResult()
        var insertedIDs: [String: [ObjectID]] = [:], updatedIDs: [String: [ObjectID]] = [:], deletedIDs: [String: [ObjectID]] = [:]
        var writers: [String: SaveWriter] = [:]
        func writer(_ entity: Entity) -> SaveWriter {
            if let existing = writers[entity.name] { return existing }
            let made = SaveWriter(db: db, store: store, entity: entity, policy: mergePolicy, job: name,
                                  readSequence: readSequence, recompute: recomputeRules[entity.name])
            writers[entity.name] = made
            return made
        }
        for object in inserts {
            let assigned = object.assignedColumns.sorted()
            let outcome = try writer(object.entity).insert(columns: assigned.map { object.entity.columns[$0].name },
                                                           values: assigned.map { object.values[$0].databaseValue })
            if let id = outcome.id {
                object.assignID(id)
                // Read the row back: defaults and a rowid SQLite assigned become the snapshot.
                if let row = try writer(object.entity).currentRow(id) { object.values = row }
                if outcome.inserted {
                    insertedIDs[id.entity, default: []].append(id)
                    result.inserted += 1
                } else {
                    updatedIDs[id.entity, default: []].append(id)
                    result.updated += 1
                }
            }
            if let conflict = outcome.conflict { result.conflicts.append(conflict) }
        }
        for object in changes {
            guard let id = object.objectID else { continue }
            if object.isDeleted {
                let outcome = try writer(object.entity).delete(object)
                if let conflict = outcome.conflict { result.conflicts.append(conflict) }
                if outcome.deleted {
                    deletedIDs[id.entity, default: []].append(id)
                    result.deleted += 1
                }
            } else if let conflict = try writer(object.entity).update(object) {
                result.conflicts.append(conflict)
                if conflict.outcome != .rolledBack && conflict.outcome != .keptStore {
                    updatedIDs[id.entity, default: []].append(id)
                    result.updated += 1
                }
            } else {
                updatedIDs[id.entity, default: []].append(id)
                result.updated += 1
            }
        }
        result.didSave = DidSave(sequence: store.nextSaveSequence(), savedBy: name, inserted: insertedIDs,
                                 updated: updatedIDs, deleted: deletedIDs)
        // Conflicts in key order (the registry is unordered), as a report reader expects.
        result.conflicts.sort { StoreValue.sortsBefore($0.objectID.key, $1.objectID.key) }
        return result
    }

    /// After a save: snapshots become the saved values, deleted and conflicting objects are
    /// dropped (the next fetch reads them as they are now), inserted objects are registered.
    private func afterSave(inserts: [ManagedObject], changes: [ManagedObject], conflicts: [MergeConflict]) {
        let conflicting = Set(conflicts.map(\.objectID))
        for object in changes {
            guard let id = object.objectID else { continue }
            if object.isDeleted || (!conflicting.isEmpty && conflicting.contains(id)) {
                registered[id] = nil
            } else {
                object.snapshot = object.values
            }
        }
        for object in inserts {
            guard let id = object.objectID, !conflicting.contains(id) else { continue }
            object.snapshot = object.values
            registered[id] = object
        }
        inserted.removeAll()
        readSequence = nil
        readGeneration = nil
    }

    // MARK: Merging

    /// Merges another context's save: registered objects without unsaved changes are refreshed
    /// from the store (or dropped when deleted); objects with changes keep them, and the save
    /// checks them.
    func merge(_ save: DidSave) throws {
        for id in save.deleted.values.flatMap({ $0 }) {
            if let object = registered[id], !object.hasChanges { registered[id] = nil }
        }
        let refresh = (save.updated.values.flatMap { $0 } + save.inserted.values.flatMap { $0 })
            .filter { registered[$0].map { !$0.hasChanges } ?? false }
        for id in refresh {
            registered[id] = nil
            _ = try existingObject(with: id)
        }
    }
}
