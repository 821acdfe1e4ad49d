import BatchRunStore

/// Consecutive items of a `ResultsSnapshot` with one value of the section column.
public struct ResultsSection<Item: Sendable>: Sendable {
    /// The section column's value (`.null` for NULL).
    public let key: StoreValue
    /// Where the section's items are in the snapshot's `items`.
    public let range: Range<Int>
    public let items: ArraySlice<Item>
}
