/// An order of a fetch's models by a property, as SwiftData's `SortDescriptor`: forward
/// (lowest first) or reverse; NULL first forward, last reverse. Ties go in key order.
///
/// ```swift
/// let descriptor = FetchDescriptor<Flight>(sortBy: [ModelSort(\.delay, order: .reverse), ModelSort(\.number)])
/// ```
public struct ModelSort<Root: PersistentModel>: Sendable {
    /// Which way.
    public enum Order: Sendable {
        case forward
        case reverse
    }

    let keyPath: AnyKeyPath & Sendable
    public let order: Order

    public init<Value: ColumnValue>(_ keyPath: KeyPath<Root, Value> & Sendable, order: Order = .forward) {
        self.keyPath = keyPath
        self.order = order
    }
}
