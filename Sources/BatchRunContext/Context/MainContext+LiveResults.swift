/// Live results through the main context (see `LiveResults`).
extension MainContext {
    /// The rows of `request` kept live: the first snapshot now, then one after each save merged
    /// into this context that changed them, each yielded once the main context has merged that
    /// save (so objects it holds show what the snapshot shows). Rows are read, and changes
    /// found, off the main actor; saved rows only (this context's unsaved changes are not in
    /// them). `sectionedBy`: sections of equal values of that column, in the results' order
    /// (sort by it first, as `NSFetchedResultsController` requires).
    ///
    /// ```swift
    /// var request = FetchRequest(entity: "Session")
    /// request.sortedBy = [.ascending("user"), .descending("minutes")]
    /// for try await results in main.results(for: request, sectionedBy: "user") {
    ///     for section in results.sections { print(section.key, section.items.count) }
    /// }
    /// ```
    public func results(for request: FetchRequest, sectionedBy column: String? = nil) -> LiveResults<ResultRow> {
        .rows(store: store, request: request, sectionedBy: column, caughtUp: caughtUp)
    }

    /// The records of `request` kept live, as `results(for:sectionedBy:)` keeps rows; only the
    /// rows a save inserted or updated are decoded again.
    public func results<R: Record>(for request: FetchRequest, as type: R.Type, sectionedBy column: String? = nil) -> LiveResults<R> {
        .records(store: store, request: request, sectionedBy: column, caughtUp: caughtUp)
    }

    /// Waits, from anywhere, until this context has merged the save numbered `sequence`
    /// (at once if it is gone).
    private nonisolated var caughtUp: @Sendable (UInt64) async -> Void {
        { [weak self] sequence in await self?.catchUp(through: sequence) }
    }
}
