/// Typed records through a private context (see `Record`).
extension Context {
    /// The rows of `request` (made with `FetchRequest(R.self, where:)`, or of `R.entity` with
    /// SQL text) as records. The context keeps the values each was fetched with (until its
    /// `reset()` or `rollback()`): a record updated later writes only the columns it changed
    /// from them, checked at the save against them. It holds their objects until its next save.
    ///
    /// ```swift
    /// let delay = Attribute<Flight, Double?>("delay")
    /// var request = FetchRequest(Flight.self, where: delay > 15)
    /// request.sortedBy = [delay.descending]
    /// let late = try context.fetch(request, as: Flight.self)
    /// ```
    public func fetch<R: Record>(_ request: FetchRequest, as type: R.Type) throws -> [R] {
        try core.fetch(request, as: R.self, pinning: true)
    }

    /// A new row from `record`, saved with the next `save()`; every property type-checked as
    /// `insert(into:values:)` checks values (`ContextError.wrongType`). A nil key is assigned
    /// by the store; other nils are NULL.
    ///
    /// ```swift
    /// try await context.perform { context in
    ///     try context.insert(Flight(id: 1, number: "BA117", delay: nil))
    ///     try context.save()
    /// }
    /// ```
    public func insert<R: Record>(_ record: R) throws { try core.insert(record) }

    /// Gives the row of `record` (found by its primary key) the properties the record changed
    /// since it was fetched, saved with the next `save()`; the save checks those columns
    /// against the values fetched (a column another context changed that the record did not
    /// is left as it is; one both changed is a conflict for the merge policy).
    /// `ContextError.recordNotFound` when the row is neither stored nor inserted.
    ///
    /// ```swift
    /// var flight = try context.fetch(FetchRequest(Flight.self), as: Flight.self)[0]
    /// flight.delay = 25
    /// try context.update(flight)      // writes delay only
    /// try context.save()
    /// ```
    public func update<R: Record>(_ record: R) throws { try core.update(record) }

    /// Deletes the row of `record` (found by its primary key) with the next `save()`; a row
    /// that is gone already is nothing to delete.
    ///
    /// ```swift
    /// for flight in try context.fetch(FetchRequest(Flight.self, where: Attribute<Flight, Double?>("delay") > 600), as: Flight.self) {
    ///     try context.delete(flight)
    /// }
    /// try context.save()
    /// ```
    public func delete<R: Record>(_ record: R) throws { try core.delete(record) }
}
