/// Typed records through the main context (see `Record`).
extension MainContext {
    /// The rows of `request` as records, read and decoded off the main actor (nothing is
    /// registered; the values each row was fetched with are kept, for `update(_:)`); a row with
    /// unsaved changes in this context comes with them.
    ///
    /// ```swift
    /// let flights = try await main.fetch(FetchRequest(Flight.self), as: Flight.self)
    /// ```
    public func fetch<R: Record>(_ request: FetchRequest, as type: R.Type) async throws -> [R] {
        let read = try await ContextCore.readRecords(request, as: R.self, store: store, changed: core.changedIDs)
        core.keepFetched(read.fetched, changed: read.changed.map(\.id))
        var records = read.records
        for (index, id) in read.changed {
            if let record = try core.changedRecord(id, as: R.self) { records[index] = record }
        }
        return records
    }

    /// A new row from `record`, saved with the next `save()` (as `Context.insert(_:)`).
    ///
    /// ```swift
    /// try main.insert(Flight(id: 2, number: "LH400", delay: nil))
    /// try main.save()
    /// ```
    public func insert<R: Record>(_ record: R) throws { try core.insert(record) }

    /// Gives the row of `record` the properties the record changed since this context fetched
    /// it (as `Context.update(_:)`): a column another context saved meanwhile that the record
    /// did not change keeps that value; one both changed is a conflict for `mergePolicy`.
    ///
    /// ```swift
    /// var flight = try await main.fetch(FetchRequest(Flight.self), as: Flight.self)[0]
    /// flight.gate = "B32"
    /// try main.update(flight)
    /// try main.save()
    /// ```
    public func update<R: Record>(_ record: R) throws { try core.update(record) }

    /// Deletes the row of `record` with the next `save()` (as `Context.delete(_:)`).
    ///
    /// ```swift
    /// try main.delete(flight)
    /// try main.save()
    /// ```
    public func delete<R: Record>(_ record: R) throws { try core.delete(record) }
}
