import BatchRunStore

/// One element of `LiveResults`: the request's results after a save, in the request's order
/// (`sortedBy`, else primary-key order), their IDs, what changed since the previous element,
/// and the sections when the results are sectioned by a column.
public struct ResultsSnapshot<Item: Sendable>: Sendable {
    /// The rows (`ResultRow`) or records, in order.
    public let items: [Item]
    /// `ids[i]` is the object of `items[i]`.
    public let ids: [ObjectID]
    public let change: ResultsChange
    /// Runs of items with the same value of the section column, in order; empty unless
    /// `sectionedBy` was given.
    public let sections: [ResultsSection<Item>]
}
