import BatchRunContext
import BatchRunStore

extension MainContext {
    /// `Context.insert(_:)` on the main actor.
    ///
    /// ```swift
    /// try main.insert(Flight(number: "BA118", departs: Date()))
    /// ```
    public func insert<Root: PersistentModel>(_ model: Root) throws {
        try ModelBacking.insertGraph(model, into: core)
    }

    /// The models matching the descriptor, read off the main actor as `fetch(_:)` reads objects.
    ///
    /// ```swift
    /// let flights = try await main.fetch(FetchDescriptor<Flight>(sortBy: [ModelSort(\.number)]))
    /// ```
    public func fetch<Root: PersistentModel>(_ descriptor: FetchDescriptor<Root>) async throws -> [Root] {
        let objects = try await fetch(ModelFetch.request(descriptor, core: core))
        return try ModelFetch.models(objects, core: core)
    }

    /// `Context.delete(_:)` on the main actor.
    ///
    /// ```swift
    /// main.delete(flight)
    /// ```
    public func delete<Root: PersistentModel>(_ model: Root) {
        guard let object = model.modelBacking.object else { return }
        core.delete(object)
    }

    /// `Context.related(_:of:)` of a to-one, on the main actor.
    ///
    /// ```swift
    /// let airline = try main.related(\Flight.airline, of: flight)
    /// ```
    public func related<Root: PersistentModel, Destination: PersistentModel>(_ keyPath: KeyPath<Root, Destination?>, of model: Root) throws -> Destination? {
        try ModelRelated.one(keyPath, of: model)
    }

    /// `Context.related(_:of:)` of a to-many, on the main actor.
    ///
    /// ```swift
    /// let flights = try main.related(\Airline.flights, of: airline)
    /// ```
    public func related<Root: PersistentModel, Destination: PersistentModel>(_ keyPath: KeyPath<Root, [Destination]>, of model: Root) throws -> [Destination] {
        try ModelRelated.many(keyPath, of: model)
    }
}
