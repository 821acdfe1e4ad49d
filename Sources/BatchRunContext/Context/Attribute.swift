/// A typed reference to a column of a record's entity (Core Data's attribute; GRDB's
/// `Column`): its comparisons make a `RecordFilter`, its `ascending` and `descending` a sort.
/// The value is encoded as the record's property is (a `Date` as its ISO 8601 text, a `Bool`
/// as 0 or 1); `== nil` is `IS NULL`.
///
/// ```swift
/// let delay = Attribute<Flight, Double?>("delay")
/// var late = FetchRequest(Flight.self, where: delay > 15 && delay != nil)
/// late.sortedBy = [delay.descending]
/// ```
public struct Attribute<Root: Record, Value: Encodable & Sendable>: Sendable {
    public let name: String

    public init(_ name: String) { self.name = name }

    /// The column's sort order for `sortedBy`, lowest first.
    ///
    /// ```swift
    /// var request = FetchRequest(Flight.self)
    /// request.sortedBy = [Attribute<Flight, String>("number").ascending]
    /// ```
    public var ascending: RowRequest.Order { .ascending(name) }

    /// The column's sort order, highest first.
    ///
    /// ```swift
    /// var request = FetchRequest(Flight.self, where: Attribute<Flight, Double?>("delay") != nil)
    /// request.sortedBy = [Attribute<Flight, Double?>("delay").descending]
    /// ```
    public var descending: RowRequest.Order { .descending(name) }

    /// A comparison of the column with `value`, rendered with a parameter.
    private func compare(_ operation: String, _ value: Value) -> RecordFilter<Root> {
        do {
            let stored = try RecordEncoder.storeValue(value, record: String(describing: Root.self), entity: Root.entity, column: name)
            if stored == .null, operation == "=" || operation == "<>" { return RecordFilter(.isNull(name, operation == "=")) }
            return RecordFilter(.compare(name, operation, stored))
        } catch let error as ContextError {
            return RecordFilter(.failure(error))
        } catch {
            return RecordFilter(.failure(.recordMismatch(record: String(describing: Root.self), entity: Root.entity, column: name, problem: "\(error)")))
        }
    }

    public static func == (column: Attribute, value: Value) -> RecordFilter<Root> { column.compare("=", value) }
    public static func != (column: Attribute, value: Value) -> RecordFilter<Root> { column.compare("<>", value) }
    public static func < (column: Attribute, value: Value) -> RecordFilter<Root> { column.compare("<", value) }
    public static func <= (column: Attribute, value: Value) -> RecordFilter<Root> { column.compare("<=", value) }
    public static func > (column: Attribute, value: Value) -> RecordFilter<Root> { column.compare(">", value) }
    public static func >= (column: Attribute, value: Value) -> RecordFilter<Root> { column.compare(">=", value) }
}
