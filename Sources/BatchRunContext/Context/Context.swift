import BatchRunStore
import Foundation

/// A private context: one unit of work with change tracking, isolated to its own serial
/// queue (an actor with its own executor), saved through the store with optimistic conflict
/// detection and resolved by its merge policy. Objects stay inside; `ObjectID`s travel.
///
/// ```swift
/// let context = Context(store: store, name: "close_stale", mergePolicy: .objectTrump)
/// let result = try await context.perform { context in
///     for session in try context.fetch(FetchRequest(entity: "Session", where: "status = 'open'")) {
///         try session.set("status", to: "stale")
///     }
///     return try context.save()
/// }
/// print(result.updated, result.conflicts.count)
/// ```
public actor Context {
    package nonisolated let store: Store
    /// Names the context in `DidSave` and in conflicts' `changed_by`: usually the job's name.
    package nonisolated let name: String
    package let core: ContextCore
    package nonisolated let interrupter: Interrupter
    private nonisolated let executor: QueueExecutor
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    public init(store: Store, name: String, mergePolicy: MergePolicy = .error) {
        self.store = store
        self.name = name
        self.core = ContextCore(store: store, name: name, mergePolicy: mergePolicy)
        self.interrupter = core.interrupter
        self.executor = QueueExecutor(label: "batchrun.context.\(name)")
    }

    public var mergePolicy: MergePolicy {
        get { core.mergePolicy }
        set { core.mergePolicy = newValue }
    }

    /// Expressions `recompute` evaluates again on a conflicting row, per entity.
    package var recomputeRules: [String: RecomputeRule] {
        get { core.recomputeRules }
        set { core.recomputeRules = newValue }
    }

    /// Called after every successful save, on the context's queue (a per-save block).
    public var didSaveBlock: (@Sendable (SaveResult) -> Void)? {
        get { core.didSaveBlock }
        set { core.didSaveBlock = newValue }
    }

    // MARK: Entry points

    /// Interrupts the statement the context is running, from any thread, and every statement
    /// it starts afterwards: they throw `SQLITE_INTERRUPT`, and a write in flight rolls back.
    public nonisolated func interrupt() {
        interrupter.interrupt()
    }

    /// Runs `body` on the context's queue and waits for it; for synchronous code such as a
    /// job's steps. Must not be called from the context's own queue.
    public nonisolated func performAndWait<T: Sendable>(_ body: @Sendable (isolated Context) throws -> T) rethrows -> T {
        try executor.queue.sync {
            try self.assumeIsolated { context in try body(context) }
        }
    }

    /// Runs `body` on the context's queue.
    public func perform<T: Sendable>(_ body: @Sendable (isolated Context) throws -> T) rethrows -> T {
        try body(self)
    }

    /// Runs `body` in one write transaction: every fetch sees this context's saves, and what
    /// `body` saved is kept only if it returns. A throw rolls back everything.
    public func atomically<T>(_ body: (isolated Context) throws -> T) throws -> T {
        try core.atomically { try body(self) }
    }

    // MARK: Raw reads and writes (inside the library)

    /// True inside `atomically`: every read and save goes through its one open transaction.
    var isAtomic: Bool { core.isAtomic }

    /// Reads from a consistent snapshot (inside `atomically`, from its transaction).
    package func read<T>(_ body: (any StoreConnection) throws -> T) throws -> T { try core.read(body) }

    /// The one save path, for steps that write without objects (imports, hot swaps, direct
    /// updates): `body` writes in one transaction and records what it changed.
    package func commit<T>(_ body: (any StoreConnection, inout SaveChanges) throws -> T) throws -> (value: T, result: SaveResult) {
        try core.commit(body)
    }

    // MARK: Objects

    /// Fetches rows as objects. An object already registered with unsaved changes keeps them.
    public func fetch(_ request: FetchRequest) throws -> [ManagedObject] { try core.fetch(request) }

    /// Rows of values (counts, aggregates, groups) from a snapshot: no objects are registered.
    public func fetch(_ request: RowRequest) throws -> [ResultRow] { try core.fetch(request) }

    /// How many rows match (`request.limit` and `after` apply).
    public func count(_ request: FetchRequest) throws -> Int { try core.count(request) }

    /// The registered object with this ID, read from the store if it is not registered.
    public func existingObject(with id: ObjectID) throws -> ManagedObject? { try core.existingObject(with: id) }

    /// The objects with these IDs, in their order (nil where the row is gone): registered ones
    /// as they are, the others read with one statement per entity.
    public func existingObjects(with ids: [ObjectID]) throws -> [ManagedObject?] { try core.existingObjects(with: ids) }

    /// A new object, saved with the next `save()`.
    @discardableResult
    public func insert(into entity: String, values: [String: StoreValue]) throws -> ManagedObject {
        try core.insert(into: entity, values: values)
    }

    /// Marks an object deleted; the row goes with the next `save()`.
    public func delete(_ object: ManagedObject) { core.delete(object) }

    public var hasChanges: Bool { core.hasChanges }

    /// Every object the context holds: those someone holds or that have unsaved changes, and
    /// the inserts (every registered one with `retainsRegisteredObjects`).
    public var registeredObjects: [ManagedObject] { core.registeredObjects }

    /// Core Data's `retainsRegisteredObjects`. False (the default): the context holds an object
    /// only while it has unsaved changes; one nobody else holds is forgotten (a later fetch
    /// reads it again), so saves and memory follow the changes, not the objects read or
    /// saved. True: it holds every registered object until `reset()`.
    public var retainsRegisteredObjects: Bool {
        get { core.retainsRegisteredObjects }
        set { core.retainsRegisteredObjects = newValue }
    }

    // MARK: Saving and merging

    /// Writes every change in one transaction, each update and delete checked against the
    /// values read. Conflicts are resolved by `mergePolicy`; under `error` the first one throws
    /// `MergeConflictError`, nothing is written, and the context keeps its changes.
    @discardableResult
    public func save() throws -> SaveResult { try core.save() }

    /// Saves as `save()` does, but when nothing at all was committed to the store since this
    /// context read (by anyone), runs `bulk`, the same changes as one set-based statement,
    /// instead of checking and writing row by row.
    @discardableResult
    package func save(bulk: BulkChange) throws -> SaveResult { try core.save(bulk: bulk) }

    /// Saves, then forgets every object (as `reset()`): for batch loops, which need no
    /// snapshots of what they saved. The result's `DidSave` lists the changed IDs only when
    /// someone listens (a `didSaves()` subscriber, such as a main context, or a per-save block).
    @discardableResult
    public func saveAndReset() throws -> SaveResult { try core.save(bulk: nil, forgetting: true) }

    /// `saveAndReset()`, with a bulk change written in the same transaction.
    package func saveAndReset(bulk: BulkChange?) throws -> SaveResult { try core.save(bulk: bulk, forgetting: true) }

    /// Saves, with a checkpoint in the same transaction (a job-file step's position).
    @discardableResult
    package func save(bulk: BulkChange?, forgetting: Bool, checkpoint: @escaping CheckpointWrite) throws -> SaveResult {
        try core.save(bulk: bulk, forgetting: forgetting, checkpoint: checkpoint)
    }

    /// The one save path with a checkpoint, for steps that write without objects.
    package func commit<T>(checkpoint: CheckpointWrite?, _ body: (any StoreConnection, inout SaveChanges) throws -> T) throws -> (value: T, result: SaveResult) {
        try core.commit(checkpoint: checkpoint, body)
    }

    /// A batch of `request` read inside its save when nothing was committed since `generation`
    /// (see `ContextCore.saveReadingKeys`); nil when it must be read as usual.
    package func saveReadingKeys(_ request: FetchRequest, since generation: UInt64, deleting: Bool,
                         statement: (ObjectID, ObjectID) -> BulkChange,
                         checkpoint: ((ObjectID) -> CheckpointWrite)?) throws -> (count: Int, last: ObjectID, result: SaveResult)? {
        try core.saveReadingKeys(request, since: generation, deleting: deleting, statement: statement, checkpoint: checkpoint)
    }

    /// Discards every unsaved change: values go back to their snapshots, inserts are dropped.
    public func rollback() { core.rollback() }

    /// Forgets every object, changes included.
    public func reset() { core.reset() }

    /// Merges another context's save: objects without unsaved changes are refreshed (or
    /// dropped when deleted); objects with changes keep them, and the next save checks them.
    public func merge(_ save: DidSave) throws { try core.merge(save) }
}

/// A context was asked for something the model does not have.
public enum ContextError: BatchRunError {
    case unknownEntity(String)
    case unknownColumn(String, String)
    /// A value written to a column (`set`, `insert`) that its declared type does not hold:
    /// text into a `real` column, a `Date` into a `real` one. Checked as the value is written,
    /// so nothing ill-typed ever waits in a context for its save.
    case wrongType(entity: String, column: String, expected: ColumnType, given: StoreValue)
    /// A `Record` type that does not map onto its entity at `column`: a property the entity has
    /// no column for, a stored value the property's type cannot take (NULL for a non-optional,
    /// text for an `Int`), a property of a nested type, or a request of another entity.
    case recordMismatch(record: String, entity: String, column: String, problem: String)
    /// `update` of a record whose row is neither in the store nor inserted in the context.
    case recordNotFound(ObjectID)
    /// A save deleting rows of `entity` that `count` rows still refer to through `relationship`
    /// (`Flight.airline`), whose delete rule is `deny`: nothing of the save was written.
    case deleteDenied(entity: String, relationship: String, count: Int)
    /// `relatedObject`/`relatedObjects` of a name that is not a to-one of the object's entity
    /// (nor the inverse of one, for a to-many): the entity, then the name.
    case unknownRelationship(String, String)

    package var code: String {
        switch self {
        case .unknownEntity: "context.unknown-entity"
        case .unknownColumn: "context.unknown-column"
        case .wrongType: "context.wrong-type"
        case .recordMismatch: "context.record-mismatch"
        case .recordNotFound: "context.record-not-found"
        case .deleteDenied: "context.delete-denied"
        case .unknownRelationship: "context.unknown-relationship"
        }
    }

    package var message: String { description }

    public var description: String {
        switch self {
        case .unknownEntity(let name): return "no entity named \(name)"
        case .unknownColumn(let entity, let column): return "entity \(entity) has no column \(column)"
        case .wrongType(let entity, let column, let expected, let given):
            let value: String
            switch given {
            case .null: value = "NULL"
            case .integer(let int): value = "integer \(int)"
            case .real(let real): value = "real \(real)"
            case .text(let text): value = "text \"\(text.count > 40 ? text.prefix(40) + "..." : text)\""
            case .blob(let bytes): value = "a blob of \(bytes.count) bytes"
            }
            return "\(entity).\(column) is \(expected.rawValue): \(value) does not fit it; give \(expected.whatFits)"
        case .recordMismatch(let record, let entity, let column, let problem):
            return "record \(record) does not map onto entity \(entity) at \(column): \(problem)"
        case .recordNotFound(let id):
            return "no row \(id) to update: insert the record first, or fetch it again (it was deleted)"
        case .unknownRelationship(let entity, let name):
            return "entity \(entity) has no relationship \(name): name a to-one declared in its relationships, or the inverse of one pointing at it"
        case .deleteDenied(let entity, let relationship, let count):
            return "cannot delete \(entity): \(count) \(count == 1 ? "row still refers" : "rows still refer") to it through \(relationship), "
                + "whose delete rule is deny; delete them or point them elsewhere first (or make the rule cascade or nullify); "
                + "nothing of this save was written"
        }
    }
}
