/// What a fetch of models reads, as SwiftData's `FetchDescriptor`: the rows matching a filter
/// (every row without one), in the sort's order (key order without one), at most `fetchLimit`.
///
/// ```swift
/// var descriptor = FetchDescriptor<Flight>(filter: #Filter { $0.delay! > 10 }, sortBy: [ModelSort(\.delay, order: .reverse)])
/// descriptor.fetchLimit = 20
/// let worst = try context.fetch(descriptor)
/// ```
public struct FetchDescriptor<Root: PersistentModel>: Sendable {
    public var filter: ModelFilter<Root>?
    public var sortBy: [ModelSort<Root>]
    public var fetchLimit: Int?

    public init(filter: ModelFilter<Root>? = nil, sortBy: [ModelSort<Root>] = [], fetchLimit: Int? = nil) {
        self.filter = filter
        self.sortBy = sortBy
        self.fetchLimit = fetchLimit
    }
}
