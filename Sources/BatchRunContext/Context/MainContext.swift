import BatchRunStore

/// The context of the main actor (Core Data's view context): it merges every save of the
/// store by itself, refreshing the objects it holds in place, so code on the main actor
/// (completion blocks among it) reads what the jobs saved.
///
/// Merges never hold the main actor long: a save is merged 2,000 IDs at a time, each slice
/// in two short hops (find the objects; apply their rows, read off the main actor in between).
/// `fetch` reads off the main actor and registers the objects on it 2,000 at a time
/// (`fetchBatchSize`), yielding between; `fetchNow` reads on it, for small reads.
///
/// ```swift
/// @MainActor func show(_ store: Store) async throws {
///     let main = MainContext(store: store)
///     let open = try await main.fetch(FetchRequest(entity: "Session", where: "status = 'open'"))
///     // ... jobs save; `open`'s objects are refreshed in place as they do ...
///     await main.catchUp()                      // every save committed so far is merged
///     let count = try main.count(FetchRequest(entity: "Session"))
/// }
/// ```
@MainActor
public final class MainContext {
    package let store: Store
    package let core: ContextCore
    private var observation: Task<Void, Never>?
    /// The number of the last save merged.
    package private(set) var mergedSequence: UInt64
    private var waiters: [(sequence: UInt64, continuation: CheckedContinuation<Void, Never>)] = []

    /// IDs of a save looked up, and objects refreshed, per hop to the main actor.
    static let mergeSlice = 2_000
    /// Objects `fetch` registers per hop when the request's `fetchBatchSize` is 0.
    static let registerSlice = 2_000
    /// Async fetches registering their objects now: while there are any, merges leave the
    /// IDs they refreshed or deleted in `mergedDuringFetches`.
    private var fetchesInFlight = 0
    /// Saves merged while fetches were in flight (their number and IDs): what a fetch's rows,
    /// read before, may not show; it refreshes those of its objects once registered.
    private var mergedDuringFetches: [(sequence: UInt64, ids: [ObjectID])] = []

    public init(store: Store, mergePolicy: MergePolicy = .error) {
        self.store = store
        self.core = ContextCore(store: store, name: "main", mergePolicy: mergePolicy)
        self.mergedSequence = store.committedSequence
        let saves = store.didSaves()
        observation = Task { @MainActor [weak self] in
            for await save in saves {
                guard let self else { return }
                await self.mergeOffMain(save)
            }
        }
    }

    /// How `save()` resolves a conflict between this context's unsaved changes and what was
    /// saved since they were read (a background save merged meanwhile): the same six policies
    /// as a private `Context`'s.
    public var mergePolicy: MergePolicy {
        get { core.mergePolicy }
        set { core.mergePolicy = newValue }
    }

    isolated deinit {
        observation?.cancel()
        for waiter in waiters { waiter.continuation.resume() }
    }

    /// Waits until every save committed before this call has been merged. `Scheduler.run()`
    /// and completion blocks already wait for it.
    public func catchUp() async {
        await catchUp(through: store.committedSequence)
    }

    /// Waits until the save numbered `target` (and every earlier one) has been merged.
    package func catchUp(through target: UInt64) async {
        guard mergedSequence < target else { return }
        await withCheckedContinuation { continuation in
            waiters.append((target, continuation))
        }
    }

    /// Merges `save` in slices of `mergeSlice` IDs, each two short hops on the main actor:
    /// find the registered objects without changes, then (after their rows were read and
    /// matched to them off the main actor) refresh them in place.
    private func mergeOffMain(_ save: DidSave) async {
        let ids = save.refreshedIDs
        let deleted = Array(save.deleted.values.joined())
        if fetchesInFlight > 0 { mergedDuringFetches.append((save.sequence, ids + deleted)) }
        for start in stride(from: 0, to: deleted.count, by: Self.mergeSlice) {
            if start > 0 { await Task.yield() }
            core.dropDeleted(deleted[start..<min(start + Self.mergeSlice, deleted.count)])
        }
        var start = 0
        while start < ids.count {
            let objects = core.unchangedObjects(with: ids[start..<min(start + Self.mergeSlice, ids.count)])
            start += Self.mergeSlice
            guard !objects.isEmpty else { continue }
            let slice = objects.map { $0.objectID! }
            let store = self.store
            if let rows = try? await store.backend.read({ db in try ContextCore.currentRows(of: slice, model: store.model, in: db) }) {
                core.apply(rows, to: objects)
            }
        }
        mergedSequence = max(mergedSequence, save.sequence)
        let ready = waiters.filter { $0.sequence <= mergedSequence }
        waiters.removeAll { $0.sequence <= mergedSequence }
        for waiter in ready { waiter.continuation.resume() }
    }

    // MARK: Reading

    /// Fetches rows as objects now, reading on the main actor: for small reads. (`fetch` reads
    /// off the main actor; the two are named apart so that neither is called for the other.)
    public func fetchNow(_ request: FetchRequest) throws -> [ManagedObject] { try core.fetch(request) }

    /// Fetches rows as objects: reads them off the main actor, then registers them on it
    /// `fetchBatchSize` (default 2,000) at a time, yielding the main actor between hops. A save
    /// merged meanwhile is not undone: its rows among the objects are read again at the end.
    public func fetch(_ request: FetchRequest) async throws -> [ManagedObject] {
        fetchesInFlight += 1
        defer {
            fetchesInFlight -= 1
            if fetchesInFlight == 0 { mergedDuringFetches = [] }
        }
        let read = try await ContextCore.readOffMain(request, store: store)
        let slice = request.fetchBatchSize > 0 ? request.fetchBatchSize : Self.registerSlice
        var objects: [ManagedObject] = []
        objects.reserveCapacity(read.rows.count)
        core.registered.reserveCapacity(core.registered.count + read.rows.count)   // one rehash, not one per doubling
        for start in stride(from: 0, to: read.rows.count, by: slice) {
            if start > 0 { await Task.yield() }
            objects += try core.register(read, rows: start..<min(start + slice, read.rows.count), for: request)
        }
        await refresh(objects, changedAfter: read.sequence)
        return objects
    }

    /// Reads again the rows of `objects` (those without changes) that saves merged after
    /// `sequence` touched, in slices as a merge does.
    private func refresh(_ objects: [ManagedObject], changedAfter sequence: UInt64) async {
        let touched = Set(mergedDuringFetches.filter { $0.sequence > sequence }.flatMap(\.ids))
        guard !touched.isEmpty else { return }
        let stale = objects.filter { object in object.objectID.map { touched.contains($0) } ?? false }
        for start in stride(from: 0, to: stale.count, by: Self.mergeSlice) {
            let slice = stale[start..<min(start + Self.mergeSlice, stale.count)].filter { !$0.hasChanges }
            let ids = slice.map { $0.objectID! }
            let store = self.store
            if let rows = try? await store.backend.read({ db in try ContextCore.currentRows(of: ids, model: store.model, in: db) }) {
                core.apply(rows, to: slice)
            }
        }
    }

    /// Rows of values (counts, aggregates, groups), read off the main actor.
    public func fetch(_ request: RowRequest) async throws -> [ResultRow] {
        let model = store.model
        do {
            return try await store.backend.read { db in try ContextCore.rows(request, model: model, in: db) }
        } catch {
            throw DatabaseFailure.publicError(error)
        }
    }

    /// Rows of values, read on the main actor.
    package func fetch(_ request: RowRequest) throws -> [ResultRow] { try core.fetch(request) }

    /// How many rows match (`request.limit` and `after` apply).
    public func count(_ request: FetchRequest) throws -> Int { try core.count(request) }

    public func existingObject(with id: ObjectID) throws -> ManagedObject? { try core.existingObject(with: id) }

    /// The objects with these IDs, in their order (nil where the row is gone): registered ones
    /// as they are, the others read with one statement per entity.
    public func existingObjects(with ids: [ObjectID]) throws -> [ManagedObject?] { try core.existingObjects(with: ids) }

    package var registeredObjects: [ManagedObject] { core.registeredObjects }

    /// As `Context.retainsRegisteredObjects`: false (the default), the main context holds an
    /// object only while it has unsaved changes or someone holds it (a screen's objects are
    /// held by the screen, and merged in place while they are).
    public var retainsRegisteredObjects: Bool {
        get { core.retainsRegisteredObjects }
        set { core.retainsRegisteredObjects = newValue }
    }

    // MARK: Changing

    /// A new object, saved with the next `save()`.
    @discardableResult
    public func insert(into entity: String, values: [String: StoreValue]) throws -> ManagedObject {
        try core.insert(into: entity, values: values)
    }

    /// Marks an object deleted; the row goes with the next `save()`.
    public func delete(_ object: ManagedObject) { core.delete(object) }

    package var hasChanges: Bool { core.hasChanges }

    @discardableResult
    public func save() throws -> SaveResult { try core.save() }

    /// Discards every unsaved change.
    public func rollback() { core.rollback() }

    /// Merges a save now (saves of the store are merged by themselves).
    package func merge(_ save: DidSave) throws { try core.merge(save) }
}
