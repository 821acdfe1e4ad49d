@_spi(BatchRunPackage) import BatchRunStore
import Foundation

/// Writes a checkpoint inside a save's transaction, given what the save changed.
package typealias CheckpointWrite = (any StoreConnection, SaveChanges) throws -> Void
/// A `CheckpointWrite` that may run on another thread (an import lane's, `ImportLanes`).
package typealias SendableCheckpointWrite = @Sendable (any StoreConnection, SaveChanges) throws -> Void

/// The change tracking behind `Context` and `MainContext`: registered objects with their
/// snapshots, pending inserts, updates and deletes, save, rollback, reset and merge.
/// Not Sendable: it lives inside the isolation of the context that owns it.
package final class ContextCore {
    package let store: Store
    package let name: String
    package var mergePolicy: MergePolicy
    /// Expressions `recompute` evaluates again on a conflicting row, per entity.
    package var recomputeRules: [String: RecomputeRule] = [:]
    /// Called after every successful save (Core Data's per-save notification for this context).
    package var didSaveBlock: (@Sendable (SaveResult) -> Void)?

    /// Registered objects, weakly unless changed (or `retainsRegisteredObjects`), and which changed.
    package let registered = ObjectRegistry()
    /// Inserted objects not yet saved, in insert order; `pendingRecords` come after them.
    private var inserted: [ManagedObject] = []
    /// Record inserts with their keys given, since the last object insert: rows, made objects
    /// only when objects are asked for (`makePendingObjects`). Exclusivity: read and written
    /// only by this class's synchronous methods, in its context's isolation, none of which
    /// calls out while it accesses the rows; the runtime's check cost 130 of a record insert's
    /// instructions.
    @exclusivity(unchecked) private var pendingRecords: PendingRecordRows?
    /// The batch of the last rows saved, emptied: the next save's rows fill its room again
    /// instead of growing a batch from nothing. Kept only when its values took at most
    /// `spareBytesKept` (10,000 rows of five columns take about 1 MB), so that one large save
    /// leaves no large batch behind; dropped by `reset()`.
    private var spareRowBatch: RowBatch?
    private static let spareBytesKept = 4 << 20
    /// Unsaved inserts by key, for record updates and deletes (`pendingInsert`): the first
    /// `insertsIndexed` of `inserted` are in it, the others are added at the next look-up.
    private var insertsByID: [ObjectID: ManagedObject] = [:]
    private var insertsIndexed = 0
    /// `ManagedObject.insertKeyChanges` when `insertsByID` was begun: a key set on an unsaved
    /// insert since makes the next look-up index them again.
    private var insertsIndexedAt = 0
    /// Inserts deleted before their save, still in `inserted` until `dropDeletedInserts()`
    /// (held, so that no new object takes their identifier meanwhile).
    private var deletedInserts: [ObjectIdentifier: ManagedObject] = [:]
    /// The assigned columns of the last insert, shared by the inserts of the same shape.
    private var lastInsertShape: (entity: String, mask: UInt64, columns: [Int])?
    /// The assigned columns of the last record insert, shared by the record inserts of that shape.
    var lastRecordShape: [Int] = []
    /// The encoder of the last record type inserted, updated or deleted (see `encoder(for:)`);
    /// its kept container refers back to it, a cycle `releaseContainer()` breaks when the
    /// context lets it go (another type's encoder takes its place, or the context ends).
    package var recordEncoder: RecordEncoder? {
        willSet { if recordEncoder !== newValue { recordEncoder?.releaseContainer() } }
    }
    /// Objects behind the records a private context fetched, by ID, held until its next save,
    /// rollback or reset: updating those records needs no read of their rows.
    var pinned: [ObjectID: ManagedObject] = [:]
    /// The rows as the records of this context's fetches were fetched, by ID (the last fetch
    /// of a row wins): `update(record)` writes only the columns the record changed from these,
    /// and the save checks those columns against these, however often the object was read or
    /// refreshed since. An update puts the record's values in (a second update of the same
    /// record writes only what changed since). Kept until `reset()` or `rollback()`; a record
    /// delete drops its row's entry.
    var fetchedRecords: [ObjectID: [StoreValue]] = [:]
    /// What the delete rules of the last commit changed: `save()` applies it again once the
    /// save's own inserts are registered (an insert of the same save a cascade deleted or a
    /// nullify emptied is not left as saved).
    private var lastRuleEffects = DeleteRuleEnforcer.Effects()
    /// The store's save number before the first read since the last save: saves after it are
    /// someone else's, for naming who changed a conflicting row.
    private var readSequence: UInt64?
    /// The store's change generation before the first read since the last save.
    private var readGeneration: UInt64?
    /// Set while `atomically` runs: every read and save goes through this one transaction.
    private var transaction: (any StoreConnection)?
    var isAtomic: Bool { transaction != nil }
    /// Saves committed inside `atomically`: posted, and their per-save blocks called, only
    /// after the outer commit.
    private var pendingSaves: [SaveResult] = []

    /// Interrupts this context's statement in flight when its work is cancelled.
    package let interrupter = Interrupter()

    package init(store: Store, name: String, mergePolicy: MergePolicy) {
        self.store = store
        self.name = name
        self.mergePolicy = mergePolicy
    }

    deinit {
        if let readSequence { store.changeLog.close(read: readSequence) }
        recordEncoder?.releaseContainer()
    }

    package func atomically<T>(_ body: () throws -> T) throws -> T {
        pendingSaves = []
        // Until the outer commit, the saves inside may still roll back: keep them in the change log.
        let opened = store.committedSequence
        store.changeLog.open(read: opened)
        defer { store.changeLog.close(read: opened) }
        let result: T
        // The block's saves are numbered inside it and committed at its end: it holds the commit order throughout.
        var holding = false
        defer { if holding { store.commitOrder.give() } }
        do {
            result = try DatabaseFailure.translating { try store.backend.write(interruptedBy: interrupter) { db in
                store.commitOrder.take()
                holding = true
                self.transaction = db
                defer { self.transaction = nil }
                return try body()
            } }
        } catch {
            store.changeLog.forget(sequences: pendingSaves.compactMap { $0.didSave?.sequence })
            pendingSaves = []
            throw error
        }
        let saves = pendingSaves
        pendingSaves = []
        for save in saves { didCommit(save) }
        return result
    }

    // MARK: The one save path

    /// Every write that changes user rows goes through here (object saves, raw batch writes,
    /// imports, hot swaps): `body` writes in one transaction (a savepoint inside `atomically`)
    /// and records what it changed in `changes`; the save is numbered and its keys recorded in
    /// the store's change log inside the transaction; after the commit (inside `atomically`,
    /// after the outer commit) the `DidSave` is posted and the per-save block called, once.
    /// `withIDs`: the `DidSave` lists the changed IDs even when nobody listens (object saves,
    /// whose IDs exist anyway); raw writes make IDs only for a listener.
    /// `checkpoint` runs in the same transaction, after `body`: the save and its checkpoint
    /// commit together or not at all.
    package func commit<T>(withIDs: Bool = false, checkpoint: CheckpointWrite? = nil,
                   _ body: (any StoreConnection, inout SaveChanges) throws -> T) throws -> (value: T, result: SaveResult) {
        var changes = newSaveChanges(withIDs: withIDs)
        var sequence: UInt64?
        var ruleEffects = DeleteRuleEnforcer.Effects()
        var holding = false
        defer { if holding { store.commitOrder.give() } }
        let ordered = transaction == nil   // inside `atomically` the block holds the order
        func work(_ db: any StoreConnection) throws -> T {
            let value = try body(db, &changes)
            (sequence, ruleEffects) = try Self.endSave(in: db, changes: &changes, checkpoint: checkpoint, store: store, savedBy: name,
                                                        takingOrder: ordered, holding: &holding)
            return value
        }
        let value: T
        let began = ContinuousClock.now
        do {
            if let transaction {
                value = try transaction.inSavepoint { try work(transaction) }
            } else {
                value = try store.backend.write(interruptedBy: interrupter) { db in try work(db) }
            }
        } catch {
            if let sequence { store.changeLog.forget(sequences: [sequence]) }
            throw DatabaseFailure.publicError(error)
        }
        return (value, saved(changes, sequence: sequence!, ruleEffects: ruleEffects, began: began))
    }

    /// A new save's change record: IDs when someone will read them (`withIDs`, a `didSaves()`
    /// subscriber, a per-save block), conflicts when a per-save block will.
    func newSaveChanges(withIDs: Bool = false) -> SaveChanges {
        SaveChanges(wantsIDs: withIDs || store.hasSaveObservers || didSaveBlock != nil, wantsConflicts: didSaveBlock != nil)
    }

    /// A save's last statements in its transaction, after its own writes: the delete rules,
    /// the commit order taken (when `takingOrder`; `holding` set then: the caller gives it back
    /// after the commit), `checkpoint`, and the save numbered and recorded in the change log. Its number and the delete rules' effects. On any thread: an import lane's
    /// (`ImportLanes`) as well as the context's.
    static func endSave(in db: any StoreConnection, changes: inout SaveChanges, checkpoint: CheckpointWrite?, store: Store,
                        savedBy name: String, takingOrder: Bool, holding: inout Bool) throws
        -> (sequence: UInt64, ruleEffects: DeleteRuleEnforcer.Effects) {
        var ruleEffects = store.model.hasRelationships ? try DeleteRuleEnforcer(model: store.model, db: db).enforce(&changes) : .init()
        ruleEffects.deleted += changes.replacedRows   // the saving context drops them too
        // The order before the checkpoint: a checkpoint may write the run's first records
        // (`RunRecording`), which another session must see committed or not at all.
        if takingOrder {
            store.commitOrder.take()
            holding = true
        }
        try checkpoint?(db, changes)
        let number = store.nextSaveSequence()
        store.changeLog.record(sequence: number, job: name, changes: changes.changedKeys)
        return (number, ruleEffects)
    }

    /// After a save's commit (`began`: when its transaction began): its delete rules' effects
    /// applied to this context's objects, its `SaveResult`, and its `DidSave` posted (inside
    /// `atomically`, after the outer commit).
    func saved(_ changes: SaveChanges, sequence: UInt64, ruleEffects: DeleteRuleEnforcer.Effects,
                       began: ContinuousClock.Instant) -> SaveResult {
        lastRuleEffects = ruleEffects
        if !ruleEffects.isEmpty { apply(ruleEffects) }
        let took = began.duration(to: .now).components
        BatchRunMetrics.batchCommitted(seconds: Double(took.seconds) + Double(took.attoseconds) * 1e-18)
        var result = SaveResult(didSave: changes.didSave(sequence: sequence, savedBy: name))
        result.inserted = changes.inserted
        result.updated = changes.updated
        result.deleted = changes.deleted
        // Conflicts in key order (a registry is unordered), as a report reader expects; those of a
        // feed in key order come sorted, and are not copied.
        let inKeyOrder = { (one: MergeConflict, other: MergeConflict) in StoreValue.sortsBefore(one.objectID.key, other.objectID.key) }
        result.conflicts = zip(changes.conflicts, changes.conflicts.dropFirst()).contains { inKeyOrder($1, $0) }
            ? changes.conflicts.sorted(by: inKeyOrder) : changes.conflicts
        if transaction != nil {
            pendingSaves.append(result)
        } else {
            didCommit(result)
        }
        return result
    }

    /// After the commit: the `DidSave` to every subscriber, then the per-save block.
    private func didCommit(_ result: SaveResult) {
        if let save = result.didSave { store.post(save) }
        didSaveBlock?(result)
    }

    /// The read this context's unsaved objects came from starts now, unless one is open.
    private func beginRead() {
        guard readSequence == nil else { return }
        let sequence = store.committedSequence
        readSequence = sequence
        readGeneration = store.changeGeneration
        store.changeLog.open(read: sequence)
    }

    /// The context holds nothing read any more (it saved or reset).
    private func endRead() {
        if let readSequence { store.changeLog.close(read: readSequence) }
        readSequence = nil
        readGeneration = nil
    }

    // MARK: Reading

    /// Rows read for a `FetchRequest`, before they become objects: each as read, and with the
    /// request's assigned columns computed.
    struct FetchedRows: Sendable {
        package var rows: [(read: [StoreValue], changed: [StoreValue])] = []
        /// The store's save number and change generation before the read.
        package var sequence: UInt64
        package var generation: UInt64
    }

    /// Fetches rows as objects. An object already registered with unsaved changes keeps them.
    package func fetch(_ request: FetchRequest) throws -> [ManagedObject] {
        if let failure = request.failure { throw failure }
        let entity = try entity(named: request.entity)
        let assigned = try assignedIndexes(request, entity: entity)
        beginRead()
        let keyIndexes = entity.primaryKeyIndexes
        if let limit = request.limit { registered.reserveCapacity(registered.count + limit) }
        let objects = try read { db in
            var objects: [ManagedObject] = []
            objects.reserveCapacity(request.limit ?? 0)
            try db.forEachRow(try db.prepare(request.sql(for: entity)), named: request.arguments(), positional: [], split: entity.columns.count, assigned: assigned) { values, changed in
                objects.append(register(values, changed: changed, entity: entity, keyIndexes: keyIndexes, assigned: assigned))
            }
            return objects
        }
        // Holding nothing read, the context can meet no conflict: other saves need not be kept for it.
        if registered.isEmpty && inserted.isEmpty && pendingRecords == nil { endRead() }
        return objects
    }

    /// Reads a `FetchRequest`'s rows off the context's isolation (the main context's async fetch).
    static func readOffMain(_ request: FetchRequest, store: Store) async throws -> FetchedRows {
        if let failure = request.failure { throw failure }
        guard let entity = store.model[request.entity] else { throw ContextError.unknownEntity(request.entity) }
        let assigned = try assignedIndexes(request, entity: entity)
        let sequence = store.committedSequence, generation = store.changeGeneration
        do { return try await store.backend.read { db in
            var fetched = FetchedRows(sequence: sequence, generation: generation)
            try db.forEachRow(try db.prepare(request.sql(for: entity)), named: request.arguments(), positional: [], split: entity.columns.count, assigned: assigned) { values, changed in
                fetched.rows.append((values, changed))
            }
            return fetched
        } } catch {
            throw DatabaseFailure.publicError(error)
        }
    }

    /// Registers rows read off the context's isolation (those in `range`, default all), as
    /// `fetch` does.
    func register(_ fetched: FetchedRows, rows range: Range<Int>? = nil, for request: FetchRequest) throws -> [ManagedObject] {
        let entity = try entity(named: request.entity)
        let assigned = try assignedIndexes(request, entity: entity)
        if readSequence == nil {
            readSequence = fetched.sequence
            readGeneration = fetched.generation
            store.changeLog.open(read: fetched.sequence)
        }
        return fetched.rows[range ?? fetched.rows.indices].map {
            register($0.read, changed: $0.changed, entity: entity, keyIndexes: entity.primaryKeyIndexes, assigned: assigned)
        }
    }

    private func register(_ values: [StoreValue], changed: [StoreValue], entity: Entity, keyIndexes: [Int],
                          assigned: [Int]) -> ManagedObject {
        let id = keyIndexes.count == 1 ? ObjectID(entity: entity.name, single: values[keyIndexes[0]])
                                       : ObjectID(entity: entity.name, key: keyIndexes.map { values[$0] })
        if let existing = registered[id] {
            if !existing.hasChanges { existing.refresh(with: values) }
            if !assigned.isEmpty { existing.assign(changed, columns: assigned) }
            return existing
        }
        let object = ManagedObject(entity: entity, values: changed, snapshot: values, id: id, changed: !assigned.isEmpty)
        registered.add(object, id: id)
        return object
    }

    private func entity(named name: String) throws -> Entity {
        guard let entity = store.model[name] else { throw ContextError.unknownEntity(name) }
        return entity
    }

    /// The entity's positions of the request's assigned columns; throws for an unknown column
    /// among them or among the sort's.
    static func assignedIndexes(_ request: FetchRequest, entity: Entity) throws -> [Int] {
        for order in request.sortedBy where entity.position(ofColumn: order.name) == nil {
            throw ContextError.unknownColumn(entity.name, order.name)
        }
        return try request.assigning.map { assignment in
            guard let index = entity.position(ofColumn: assignment.column) else {
                throw ContextError.unknownColumn(entity.name, assignment.column)
            }
            return index
        }
    }

    private func assignedIndexes(_ request: FetchRequest, entity: Entity) throws -> [Int] {
        try Self.assignedIndexes(request, entity: entity)
    }

    /// Rows of values for a `RowRequest`, from a snapshot.
    package func fetch(_ request: RowRequest) throws -> [ResultRow] {
        try read { db in try Self.rows(request, model: store.model, in: db) }
    }

    package static func rows(_ request: RowRequest, model: Model, in db: any StoreConnection) throws -> [ResultRow] {
        guard let entity = model[request.entity] else { throw ContextError.unknownEntity(request.entity) }
        let columns = request.resultColumns(of: entity)
        var rows: [ResultRow] = []
        try db.forEachRow(try db.prepare(request.sql(for: entity)), named: request.params, positional: [], split: columns.count, assigned: []) { values, _ in
            rows.append(ResultRow(columns: columns, values: values))
        }
        return rows
    }

    /// How many rows a `FetchRequest` matches, counted in the store.
    package func count(_ request: FetchRequest) throws -> Int {
        if let failure = request.failure { throw failure }
        let entity = try entity(named: request.entity)
        var plain = request
        plain.assigning = []
        let sql = "SELECT count(*) FROM (\(plain.sql(for: entity))) AS matched"   // PostgreSQL before 16 needs the alias
        return try read { db in
            var count = 0
            try db.forEachRow(try db.prepare(sql), named: plain.arguments(), positional: [], split: 1, assigned: []) { row, _ in
                if case .integer(let value) = row[0] { count = Int(value) }
            }
            return count
        }
    }

    /// The registered object with this ID, fetched from the store if it is not registered.
    package func existingObject(with id: ObjectID) throws -> ManagedObject? {
        if let object = registered[id] { return object }
        guard let entity = store.model[id.entity] else { throw ContextError.unknownEntity(id.entity) }
        var request = FetchRequest(entity: id.entity)
        // `=` for a value (an index serves it on PostgreSQL, where `IS NOT DISTINCT FROM` scans).
        let match = entity.primaryKey.enumerated().map { index, column in
            "\(SQL.quote(column)) " + (id.key[index] == .null ? "IS NULL" : "= :_batchrun_id\(index)")
        }.joined(separator: " AND ")
        request.whereClause = match
        for (index, value) in id.key.enumerated() { request.params["_batchrun_id\(index)"] = value }
        return try fetch(request).first
    }

    /// The objects with these IDs, in their order (nil where the row is gone): registered ones as
    /// they are, the others read in one statement per entity (as many keys as the database binds
    /// in one statement: 32,766 on SQLite, 65,535 on PostgreSQL).
    package func existingObjects(with ids: [ObjectID]) throws -> [ManagedObject?] {
        var missing: [ObjectID] = []
        for id in ids where registered[id] == nil {
            guard store.model[id.entity] != nil else { throw ContextError.unknownEntity(id.entity) }
            missing.append(id)
        }
        if !missing.isEmpty {
            beginRead()
            let model = store.model
            let rows = try read { db in try Self.currentRows(of: missing, model: model, in: db, keysPerStatement: .max) }
            var found: [ObjectID: ManagedObject] = [:]   // holds them: the registry does not
            found.reserveCapacity(missing.count)
            for (id, row) in zip(missing, rows) {
                guard let row, let entity = model[id.entity] else { continue }
                found[id] = register(row, changed: row, entity: entity, keyIndexes: entity.primaryKeyIndexes, assigned: [])
            }
            if registered.isEmpty && inserted.isEmpty && pendingRecords == nil { endRead() }
            return ids.map { registered[$0] ?? found[$0] }
        }
        return ids.map { registered[$0] }
    }

    /// Reads from a snapshot, or inside the transaction of `atomically`.
    package func read<T>(_ body: (any StoreConnection) throws -> T) throws -> T {
        reads += 1
        if let transaction { return try DatabaseFailure.translating { try body(transaction) } }
        return try DatabaseFailure.translating { try store.backend.read(interruptedBy: interrupter) { db in try body(db) } }
    }

    // MARK: Changing

    /// A new object, saved with the next `save()`.
    package func insert(into entityName: String, values: [String: StoreValue]) throws -> ManagedObject {
        guard let entity = store.model[entityName] else { throw ContextError.unknownEntity(entityName) }
        var row = Array(repeating: StoreValue.null, count: entity.columns.count)
        var mask: UInt64 = 0
        for (column, value) in values {
            guard let index = entity.position(ofColumn: column) else { throw ContextError.unknownColumn(entityName, column) }
            row[index] = try entity.fitting(value, at: index)
            if index < 64 { mask |= 1 << UInt64(index) }
        }
        // Inserts of one shape share one list of assigned columns.
        let assigned: [Int]
        if let last = lastInsertShape, last.mask == mask, last.entity == entity.name, entity.columns.count <= 64 {
            assigned = last.columns
        } else {
            assigned = values.keys.compactMap { entity.position(ofColumn: $0) }.sorted()
            lastInsertShape = (entity.name, mask, assigned)
        }
        let object = ManagedObject(inserting: entity, values: row, assigned: assigned)
        makePendingObjects()
        inserted.append(object)
        return object
    }

    /// A new object made elsewhere (a record's row, type-checked), saved with the next `save()`.
    package func insert(_ object: ManagedObject) {
        makePendingObjects()
        inserted.append(object)
    }

    /// A record's row whose key it gives (`values` in column order, `given` its sorted columns),
    /// saved with the next `save()`: a row of `pendingRecords`, no object.
    func insertRecordRow(_ values: [StoreValue], given: [Int], entity: Entity) {
        if pendingRecords == nil || pendingRecords!.columns != given || pendingRecords!.entity.name != entity.name {
            makePendingObjects()
            pendingRecords = PendingRecordRows(entity: entity, columns: given, reusing: spareRowBatch)
            spareRowBatch = nil
        }
        pendingRecords!.append(values)
    }

    /// The pending record rows as the objects their inserts stand for, after the other inserts.
    private func makePendingObjects() {
        guard let pending = pendingRecords else { return }
        pendingRecords = nil
        inserted += pending.objects(0..<pending.count)
    }

    /// The unsaved insert with this ID, if any (a record updated before its insert was saved):
    /// a look-up in `insertsByID`, which indexes the inserts made since the last one.
    func pendingInsert(with id: ObjectID) -> ManagedObject? {
        if pendingRecords?.entity.name == id.entity { makePendingObjects() }   // rows of another entity cannot be it
        let keyChanges = ManagedObject.insertKeyChanges.load(ordering: .relaxed)
        if keyChanges != insertsIndexedAt {
            forgetInsertIndex()
            insertsIndexedAt = keyChanges
        }
        if insertsIndexed < inserted.count {
            insertsByID.reserveCapacity(inserted.count)
            for object in inserted[insertsIndexed...] {
                if let key = object.objectID, deletedInserts[ObjectIdentifier(object)] == nil { insertsByID[key] = object }   // the last wins
            }
            insertsIndexed = inserted.count
        }
        return insertsByID[id]
    }

    private func forgetInsertIndex() {
        insertsByID.removeAll()
        insertsIndexed = 0
    }

    /// Takes the inserts deleted before their save out of `inserted`, in one pass (before
    /// anything reads `inserted`).
    func dropDeletedInserts() {
        guard !deletedInserts.isEmpty else { return }
        inserted.removeAll { deletedInserts[ObjectIdentifier($0)] != nil }
        deletedInserts.removeAll()
        forgetInsertIndex()
    }

    /// Marks an object deleted; the row goes with the next `save()`. An unsaved insert is
    /// dropped (noted, and taken out of the inserts at the next save: no scan of them here).
    package func delete(_ object: ManagedObject) {
        if object.snapshot == nil {
            guard deletedInserts[ObjectIdentifier(object)] == nil else { return }
            deletedInserts[ObjectIdentifier(object)] = object
            if let id = object.objectID, insertsByID[id] === object { insertsByID[id] = nil }
        } else {
            object.isDeleted = true
            registered.objectChanged(object)
        }
    }

    /// Reads this context made (fetches, faults): how tests see that a walk is batched.
    package private(set) var reads = 0
    /// Saves committed, and rollbacks and resets: what was read ahead of them may be stale.
    package private(set) var saves = 0
    package private(set) var discards = 0

    /// Whether an insert not saved yet was deleted before its save.
    package func isDeletedInsert(_ object: ManagedObject) -> Bool {
        deletedInserts[ObjectIdentifier(object)] != nil
    }

    /// Inserts, or changed objects whose values differ from their snapshots: the changed
    /// objects only are looked at, not every registered one.
    package var hasChanges: Bool {
        dropDeletedInserts()
        return !inserted.isEmpty || pendingRecords != nil || registered.changed.values.contains { $0.hasChanges }
    }

    /// Every object the context holds: the registered ones still alive and the inserts.
    package var registeredObjects: [ManagedObject] {
        registered.objects + unsavedInserts
    }

    /// The unsaved inserts as objects, in insert order (an insert deleted before its save left out).
    var unsavedInserts: [ManagedObject] {
        makePendingObjects()
        dropDeletedInserts()
        return inserted
    }

    /// Core Data's `retainsRegisteredObjects`: false, the context holds an object only while it
    /// has unsaved changes (or someone else holds it); true, it holds every registered object.
    package var retainsRegisteredObjects: Bool {
        get { registered.retainsObjects }
        set { registered.retainsObjects = newValue }
    }

    /// Discards every unsaved change: values go back to their snapshots, inserts are dropped.
    package func rollback() {
        discards += 1
        pinned.removeAll()
        fetchedRecords.removeAll()
        inserted.removeAll()
        pendingRecords = nil
        deletedInserts.removeAll()
        forgetInsertIndex()
        for object in registered.changed.values {
            object.isDeleted = false
            if let snapshot = object.readSnapshot ?? object.snapshot { object.refresh(with: snapshot) }
        }
        registered.clearChanged()
    }

    /// Forgets every object (changes included), as a fresh context.
    package func reset() {
        discards += 1
        pinned.removeAll()
        fetchedRecords.removeAll()
        inserted.removeAll()
        pendingRecords = nil
        spareRowBatch = nil
        deletedInserts.removeAll()
        forgetInsertIndex()
        registered.removeAll()
        endRead()
    }

    // MARK: Saving

    /// Writes every change in one transaction, each update and delete checked against the
    /// values read. Conflicts are resolved by `mergePolicy`; under `error` the first one throws
    /// `MergeConflictError`, nothing is written, and the context keeps its changes.
    /// `forgetting`: the caller resets right after, so saved objects need no new snapshots.
    package func save(bulk: BulkChange? = nil, forgetting: Bool = false, checkpoint: CheckpointWrite? = nil) throws -> SaveResult {
        defer { pinned.removeAll() }
        lastRuleEffects = DeleteRuleEnforcer.Effects()   // another commit's (a batch request's) are applied already
        dropDeletedInserts()
        forgetInsertIndex()   // its references would make every insert look held by someone
        guard hasChanges || checkpoint != nil else { return SaveResult() }
        // A context that retains its objects registers its inserts after the save: they need
        // objects. Other record inserts are written from their rows.
        if registered.retainsObjects && !forgetting { makePendingObjects() }
        let pending = pendingRecords
        // Inserts nobody but the context holds would be forgotten right after the save (the
        // registry holds objects weakly): they need neither their rows read back nor registering.
        let kept = forgetting ? [] : registered.retainsObjects ? inserted : heldInserts()
        let inserts = inserted
        let readSequence = self.readSequence ?? store.committedSequence
        let readGeneration = self.readGeneration
        var objects: [ManagedObject] = []
        let (_, result) = try commit(withIDs: !forgetting, checkpoint: checkpoint) { db, changes in
            if let bulk, inserts.isEmpty, pending == nil, let readGeneration, try self.store.isUnchanged(since: readGeneration, in: db) {
                // Every row is as read, and the statement rewrites the row of every object given
                // a value: those are the changed ones (no comparing each object's values).
                objects = self.registered.changed.values.filter(\.wasWritten)
                try self.writeBulk(bulk, objects: objects, in: db, into: &changes)
            } else {
                objects = self.registered.changed.values.filter { $0.hasChanges }
                try self.write(inserts: inserts, pending: pending, objects: objects, in: db, readSequence: readSequence,
                               readBack: !kept.isEmpty, into: &changes)
            }
        }
        if forgetting {
            reset()
        } else {
            afterSave(inserts: kept, changes: objects, conflicts: result.conflicts)
            if !lastRuleEffects.isEmpty { apply(lastRuleEffects) }
        }
        lastRuleEffects = DeleteRuleEnforcer.Effects()
        return result
    }

    /// The inserted objects someone besides the context holds (checked before `inserted` is
    /// copied: a copy's elements are not uniquely referenced).
    private func heldInserts() -> [ManagedObject] {
        var held: [ManagedObject] = []
        inserted.withUnsafeMutableBufferPointer { objects in   // one access to the array, not one per object
            for index in objects.indices where !isKnownUniquelyReferenced(&objects[index]) { held.append(objects[index]) }
        }
        return held
    }

    /// The fast save: nothing was committed since the read, so no row can conflict and the
    /// batch's set-based statement changes exactly the objects' rows.
    private func writeBulk(_ bulk: BulkChange, objects: [ManagedObject], in db: any StoreConnection, into changes: inout SaveChanges) throws {
        try Self.writeBulk(bulk, deleted: objects.filter(\.isDeleted).count, in: db, into: &changes) { changes in
            if let entity = objects.first?.entity.name, objects.allSatisfy({ $0.entity.name == entity && !$0.isDeleted })
                || objects.allSatisfy({ $0.entity.name == entity && $0.isDeleted }) {
                // One entity, one kind of change: the usual batch, gathered in one pass.
                changes.record(contentsOf: objects.compactMap(\.objectID), entity: entity,
                               objects.first?.isDeleted == true ? .deleted : .updated)
            } else {
                for object in objects {
                    guard let id = object.objectID else { continue }
                    changes.record(id, object.isDeleted ? .deleted : .updated)
                }
            }
        }
    }

    /// Every fast save's statement (objects read before the save, or keys read inside it):
    /// runs `bulk`, which changes exactly the rows read, has `record` name them, and counts
    /// them: `deleted` of them deleted (nil: all), the others updated.
    static func writeBulk(_ bulk: BulkChange, deleted: Int?, in db: any StoreConnection, into changes: inout SaveChanges,
                          record: (inout SaveChanges) -> Void) throws {
        try db.execute(bulk.sql, SQLArguments(named: bulk.params))
        record(&changes)
        let changed = db.changedRowCount
        changes.deleted = deleted ?? changed
        changes.updated = changed - changes.deleted
    }

    /// `readBack`: inserted objects take their row as stored (defaults, a rowid SQLite assigned)
    /// as their snapshot; a save that forgets its objects skips it.
    private func write(inserts: [ManagedObject], pending: PendingRecordRows?, objects: [ManagedObject], in db: any StoreConnection,
                       readSequence: UInt64, readBack: Bool, into changes: inout SaveChanges) throws {
        var writers: [String: SaveWriter] = [:]
        func writer(_ entity: Entity) -> SaveWriter {
            if let existing = writers[entity.name] { return existing }
            let made = SaveWriter(db: db, store: store, entity: entity, policy: mergePolicy, job: name,
                                  readSequence: readSequence, recompute: recomputeRules[entity.name])
            writers[entity.name] = made
            return made
        }
        var inserter = ObjectInserter(db: db, backend: store.backend, readBack: readBack)
        try inserter.insert(inserts, into: &changes, writer: writer)
        if let pending {   // no object to take its row back
            var rows = ObjectInserter(db: db, backend: store.backend, readBack: false)
            try rows.insert(pending, into: &changes, writer: writer)
        }
        // Updates set-based, each row checked against its read; only rows changed since go one by one.
        var changedSinceRead: [ManagedObject] = []
        let updates = objects.filter { !$0.isDeleted && $0.objectID != nil && $0.snapshot != nil }
        for group in Dictionary(grouping: updates, by: { $0.entity.name }).values {
            let (written, changed) = try writer(group[0].entity).updateChecked(group)
            changes.record(contentsOf: written, entity: group[0].entity.name, .updated)
            changes.updated += written.count
            changedSinceRead += changed
        }
        for object in objects where object.isDeleted {
            guard let id = object.objectID else { continue }
            let outcome = try writer(object.entity).delete(object)
            if let conflict = outcome.conflict { changes.conflicts.append(conflict) }
            if outcome.deleted {
                changes.record(id, .deleted)
                changes.deleted += 1
            }
        }
        for object in changedSinceRead {
            guard let id = object.objectID else { continue }
            if let (conflict, replaced) = try writer(object.entity).update(object) {
                changes.conflicts.append(conflict)
                if ConflictResolver.wrote(conflict.outcome) {
                    changes.record(id, .updated)
                    changes.updated += 1
                }
                changes.recordReplaced(replaced)
            } else {
                changes.record(id, .updated)
                changes.updated += 1
            }
        }
    }

    /// After a save: snapshots become the saved values, deleted and conflicting objects are
    /// dropped (the next fetch reads them as they are now), `inserts` (those kept) are registered.
    private func afterSave(inserts: [ManagedObject], changes: [ManagedObject], conflicts: [MergeConflict]) {
        saves += 1
        let conflicting = Set(conflicts.map(\.objectID))
        for object in changes {
            guard let id = object.objectID else { continue }
            if object.isDeleted || (!conflicting.isEmpty && conflicting.contains(id)) {
                registered.remove(id, ifItIs: object)
            } else {
                object.refresh(with: object.values)
            }
        }
        // Objects given their own values again had nothing to save: they are unchanged now too.
        for object in registered.changed.values where !object.hasChanges { object.refresh(with: object.values) }
        registered.clearChanged()
        registered.reserveCapacity(registered.count + inserts.count)
        for object in inserts {
            guard let id = object.objectID, !conflicting.contains(id) else { continue }
            object.refresh(with: object.values)
            registered.add(object, id: id)
        }
        inserted.removeAll()
        if let saved = pendingRecords?.batch, saved.byteCount <= Self.spareBytesKept { spareRowBatch = saved }
        pendingRecords = nil
        deletedInserts.removeAll()
        forgetInsertIndex()
        endRead()
    }

    // MARK: Merging

    /// Merges another context's save: registered objects without unsaved changes are refreshed
    /// in place from the store (the same instances), or dropped when deleted; objects with
    /// changes keep them, and the next save checks them.
    package func merge(_ save: DidSave) throws {
        dropDeleted(in: save)
        let objects = unchangedObjects(with: save.refreshedIDs)
        guard !objects.isEmpty else { return }
        let ids = objects.map { $0.objectID! }
        apply(try read { db in try Self.currentRows(of: ids, model: store.model, in: db) }, to: objects)
    }

    /// Drops the registered objects `save` deleted, unless they have changes.
    func dropDeleted(in save: DidSave) {
        dropDeleted(save.deleted.values.joined())
    }

    /// Drops the registered objects with these IDs (rows deleted), unless they have changes.
    func dropDeleted(_ ids: some Sequence<ObjectID>) {
        for id in ids {
            fetchedRecords[id] = nil
            if let object = registered[id], !object.hasChanges { registered.remove(id) }
        }
    }

    /// The registered objects with these IDs that have no unsaved changes.
    func unchangedObjects(with ids: some Collection<ObjectID>) -> [ManagedObject] {
        var objects: [ManagedObject] = []
        objects.reserveCapacity(ids.count)
        for id in ids {
            if let object = registered[id], !object.hasChanges { objects.append(object) }
        }
        return objects
    }

    /// A merge's last step: `rows[i]`, read for `objects[i]` (`currentRows`), becomes its values
    /// and snapshot, in place; an object whose row is gone (nil) is dropped. Objects changed
    /// since they were found keep their changes. No hashing: the rows come in the objects' order.
    package func apply(_ rows: [[StoreValue]?], to objects: [ManagedObject]) {
        for (object, row) in zip(objects, rows) where !object.hasChanges {
            if let row { object.refresh(with: row) } else if let id = object.objectID { registered.remove(id, ifItIs: object) }
        }
    }

    /// The current rows of `ids`, in their order (nil for a row that is gone), read with one
    /// statement per entity and `keysPerStatement` keys (at most what the database binds).
    static func currentRows(of ids: [ObjectID], model: Model, in db: any StoreConnection,
                            keysPerStatement: Int = 500) throws -> [[StoreValue]?] {
        var rows: [ObjectID: [StoreValue]] = [:]
        rows.reserveCapacity(ids.count)
        for (entityName, group) in Dictionary(grouping: ids, by: \.entity) {
            guard let entity = model[entityName] else { continue }
            let keys = entity.primaryKey.map(SQL.quote)
            let keyIndexes = entity.primaryKeyIndexes
            let size = max(1, min(keysPerStatement, db.parameterLimit / keys.count))
            for start in stride(from: 0, to: group.count, by: size) {
                let chunk = group[start..<min(start + size, group.count)]
                let placeholder = keys.count == 1 ? "?" : "(" + Array(repeating: "?", count: keys.count).joined(separator: ", ") + ")"
                let match = keys.count == 1 ? keys[0] : "(" + keys.joined(separator: ", ") + ")"
                let sql = "SELECT \(SQL.quoteList(entity.columnNames)) FROM \(SQL.quote(entity.tableName)) WHERE \(match) IN ("
                    + Array(repeating: placeholder, count: chunk.count).joined(separator: ", ") + ")"
                try db.forEachRow(try db.prepare(sql), named: [:], positional: chunk.flatMap(\.key),
                                            split: entity.columns.count, assigned: []) { row, _ in
                    rows[ObjectID(entity: entity.name, key: keyIndexes.map { row[$0] })] = row
                }
            }
        }
        return ids.map { rows[$0] }
    }
}
