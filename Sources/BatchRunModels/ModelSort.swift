/// An order of a fetch's models by a property, as SwiftData's `SortDescriptor`: forward
/// (lowest first) or reverse; NULL first forward, last reverse. Ties go in key order.
///
/// ```swift
/// let descriptor = FetchDescriptor<Flight>(sortBy: [ModelSort(\.delay, order: .reverse), ModelSort(\.number)])
/// ```
public struct ModelSort<Root: PersistentModel>: Sendable {
    /// Which way.
    ///
    /// ```swift
    /// let latestFirst = ModelSort(\Flight.departs, order: .reverse)
    /// ```
    public enum Order: Sendable {
        /// Lowest first, NULL first.
        case forward
        /// Highest first, NULL last.
        case reverse
    }

    let keyPath: AnyKeyPath & Sendable
    /// Which way the models go.
    public let order: Order

    /// An order by a property stored in a column, forward unless told.
    ///
    /// ```swift
    /// let byNumber = ModelSort(\Flight.number)
    /// ```
    public init<Value: ColumnValue>(_ keyPath: KeyPath<Root, Value> & Sendable, order: Order = .forward) {
        self.keyPath = keyPath
        self.order = order
    }
}
