import BatchRunStore

/// A typed condition on a record's rows, made by comparing `Attribute`s and combined with
/// `&&` and `||`; a `FetchRequest(Flight.self, where:)` renders it as SQL with parameters. SQL
/// text stays the escape hatch: `FetchRequest(entity: Flight.entity, where: "...")`.
///
/// ```swift
/// let number = Attribute<Flight, String>("number"), delay = Attribute<Flight, Double?>("delay")
/// let filter = number == "BA117" || delay >= 60
/// ```
public struct RecordFilter<Root: Record>: Sendable {
    package indirect enum Node: Sendable {
        case compare(String, String, StoreValue)
        case isNull(String, Bool)
        case and(Node, Node)
        case or(Node, Node)
        /// A value that no column holds (a nested type): fetches with the filter throw it.
        case failure(ContextError)
    }

    package let node: Node

    package init(_ node: Node) { self.node = node }

    public static func && (lhs: RecordFilter, rhs: RecordFilter) -> RecordFilter { RecordFilter(.and(lhs.node, rhs.node)) }
    public static func || (lhs: RecordFilter, rhs: RecordFilter) -> RecordFilter { RecordFilter(.or(lhs.node, rhs.node)) }

    /// The SQL of the condition, its values added to `params` as `:_batchrun_f0`, `:_batchrun_f1`...
    package func sql(params: inout [String: StoreValue]) throws -> String {
        try Self.render(node, &params)
    }

    private static func render(_ node: Node, _ params: inout [String: StoreValue]) throws -> String {
        switch node {
        case .compare(let column, let operation, let value):
            let name = "_batchrun_f\(params.count)"
            params[name] = value
            return "\(SQL.quote(column)) \(operation) :\(name)"
        case .isNull(let column, let isNull):
            return "\(SQL.quote(column)) IS \(isNull ? "" : "NOT ")NULL"
        case .and(let lhs, let rhs):
            return "(\(try render(lhs, &params)) AND \(try render(rhs, &params)))"
        case .or(let lhs, let rhs):
            return "(\(try render(lhs, &params)) OR \(try render(rhs, &params)))"
        case .failure(let error):
            throw error
        }
    }
}

extension FetchRequest {
    /// A request of `type`'s entity, its rows filtered by `filter` (nil: every row), for
    /// `fetch(_:as:)`. A filter's column the entity lacks throws at the fetch, as `where` text does.
    ///
    /// ```swift
    /// var request = FetchRequest(Flight.self, where: Attribute<Flight, Double?>("delay") > 15, limit: 100)
    /// let late = try context.fetch(request, as: Flight.self)
    /// ```
    public init<R: Record>(_ type: R.Type, where filter: RecordFilter<R>? = nil, limit: Int? = nil) {
        self.init(entity: R.entity, limit: limit)
        guard let filter else { return }
        do {
            whereClause = try filter.sql(params: &params)
        } catch let error as ContextError {
            failure = error
        } catch {
            failure = .recordMismatch(record: String(describing: R.self), entity: R.entity, column: "(the filter)", problem: "\(error)")
        }
    }
}
