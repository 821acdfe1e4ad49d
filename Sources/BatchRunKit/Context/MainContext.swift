/// The context of the main actor (Core Data's view context): it merges every save of the
/// store automatically, so code on the main actor (completion blocks among it) reads what
/// the jobs saved.
///
/// ```swift
/// @MainActor func show(_ store: Store) async throws {
///     let main = MainContext(store: store)
///     // ... jobs save ...
///     await main.catchUp()
///     let open = try main.fetch(FetchRequest(entity: "Session", where: "status = 'open'"))
/// }
/// ```
@MainActor
public final class MainContext {
    public let store: Store
    private let core: ContextCore
    private var observation: Task<Void, Never>?
    /// The number of the last save merged.
    public private(set) var mergedSequence: UInt64

    public init(store: Store) {
        self.store = store
        self.core = ContextCore(store: store, name: "main", mergePolicy: .error)
        self.mergedSequence = store.saveSequence
        let saves = store.didSaves()
        observation = Task { @MainActor [weak self] in
            for await save in saves {
                guard let self else { return }
                try? self.core.merge(save)
                self.mergedSequence = max(self.mergedSequence, save.sequence)
            }
        }
    }

    deinit {
        observation?.cancel()
    }

    /// Waits until every save posted before this call has been merged.
    public func catchUp() async {
        let target = store.postedSaveSequence
        while mergedSequence < target && !Task.isCancelled {
            await Task.yield()
        }
    }

    public func fetch(_ request: FetchRequest) throws -> [ManagedObject] { try core.fetch(request) }

    public func existingObject(with id: ObjectID) throws -> ManagedObject? { try core.existingObject(with: id) }

    public var registeredObjects: [ManagedObject] { core.registeredObjects }

    public var hasChanges: Bool { core.hasChanges }

    @discardableResult
    public func save() throws -> SaveResult { try core.save() }

    public func merge(_ save: DidSave) throws { try core.merge(save) }
}
