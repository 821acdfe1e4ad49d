import BatchRunContext
import BatchRunStore

extension Context {
    /// Inserts a model (and the models its relationships hold that are not inserted yet): from
    /// now on its properties read and write its row's object, and `save()` writes it. A nil
    /// `@Key` is assigned by the store at the save and read back from the row after it.
    ///
    /// ```swift
    /// let airline = Airline(id: 1, name: "UA")
    /// try context.insert(Flight(number: "UA90", departs: Date(), airline: airline))   // the airline too
    /// try context.save()
    /// ```
    public func insert<Root: PersistentModel>(_ model: Root) throws {
        try ModelBacking.insertGraph(model, into: core)
    }

    /// The models matching the descriptor, one instance per row in this context (the same one
    /// while someone holds it). Their changes are tracked: `save()` writes them, no `update`.
    ///
    /// ```swift
    /// for flight in try context.fetch(FetchDescriptor(filter: #Filter<Flight> { $0.airline?.name == "UA" })) {
    ///     flight.delay = nil
    /// }
    /// try context.save()
    /// ```
    public func fetch<Root: PersistentModel>(_ descriptor: FetchDescriptor<Root>) throws -> [Root] {
        try ModelFetch.models(core.fetch(ModelFetch.request(descriptor, core: core)), core: core)
    }

    /// Deletes a model's row at the next save (with its relationships' delete rules); a model
    /// never inserted is left as it is.
    ///
    /// ```swift
    /// context.delete(airline)     // its flights by the rule of Airline.flights
    /// try context.save()
    /// ```
    public func delete<Root: PersistentModel>(_ model: Root) {
        guard let object = model.modelBacking.object else { return }
        core.delete(object)
    }

    /// A to-one's model, as `model.airline` reads it, but a failed read (an interrupt, a lost
    /// connection) is thrown instead of stopping the program: for walks that may fail.
    ///
    /// ```swift
    /// let airline = try context.related(\Flight.airline, of: flight)
    /// ```
    public func related<Root: PersistentModel, Destination: PersistentModel>(_ keyPath: KeyPath<Root, Destination?>, of model: Root) throws -> Destination? {
        try ModelRelated.one(keyPath, of: model)
    }

    /// A to-many's models, as `model.flights` reads them, a failed read thrown.
    ///
    /// ```swift
    /// let flights = try context.related(\Airline.flights, of: airline)
    /// ```
    public func related<Root: PersistentModel, Destination: PersistentModel>(_ keyPath: KeyPath<Root, [Destination]>, of model: Root) throws -> [Destination] {
        try ModelRelated.many(keyPath, of: model)
    }
}
