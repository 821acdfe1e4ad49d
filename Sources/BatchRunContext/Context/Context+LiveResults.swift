/// Live results through a private context (see `LiveResults`).
extension Context {
    /// The rows of `request` kept live: the first snapshot now, then one after each save
    /// committed to the store (by any context, this one included) that changed them. A private
    /// context merges others' saves only when asked (`merge`), so its live results follow the
    /// store's saved rows, not its objects. `sectionedBy` as `MainContext.results(for:sectionedBy:)`.
    public nonisolated func results(for request: FetchRequest, sectionedBy column: String? = nil) -> LiveResults<ResultRow> {
        .rows(store: store, request: request, sectionedBy: column, caughtUp: nil)
    }

    /// The records of `request` kept live, as `results(for:sectionedBy:)` keeps rows.
    public nonisolated func results<R: Record>(for request: FetchRequest, as type: R.Type,
                                               sectionedBy column: String? = nil) -> LiveResults<R> {
        .records(store: store, request: request, sectionedBy: column, caughtUp: nil)
    }
}
