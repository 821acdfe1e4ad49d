/// What a fetch of models reads, as SwiftData's `FetchDescriptor`: the rows matching a filter
/// (every row without one), in the sort's order (key order without one), at most `fetchLimit`.
///
/// ```swift
/// var descriptor = FetchDescriptor<Flight>(filter: #Filter { $0.delay! > 10 }, sortBy: [ModelSort(\.delay, order: .reverse)])
/// descriptor.fetchLimit = 20
/// let worst = try context.fetch(descriptor)
/// ```
public struct FetchDescriptor<Root: PersistentModel>: Sendable {
    /// The condition the models meet; nil: every row.
    public var filter: ModelFilter<Root>?
    /// The order, the first sort first; empty: key order.
    public var sortBy: [ModelSort<Root>]
    /// At most this many models; nil: no limit.
    public var fetchLimit: Int?

    /// The rows matching `filter`, in `sortBy`'s order, at most `fetchLimit` of them.
    ///
    /// ```swift
    /// let first = try context.fetch(FetchDescriptor<Flight>(sortBy: [ModelSort(\.number)], fetchLimit: 1))
    /// ```
    public init(filter: ModelFilter<Root>? = nil, sortBy: [ModelSort<Root>] = [], fetchLimit: Int? = nil) {
        self.filter = filter
        self.sortBy = sortBy
        self.fetchLimit = fetchLimit
    }
}
