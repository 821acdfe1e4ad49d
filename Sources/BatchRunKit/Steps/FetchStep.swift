/// `fetch`: reads rows of an entity from a consistent snapshot, to a file, the terminal or `as:` outputs.
public struct FetchStep: Sendable, Hashable {
    public typealias Item = RowRequest.Item
    public typealias Order = RowRequest.Order

    public enum Output: Sendable, Hashable {
        case csv(String), json(String), ndjson(String)
        /// `-`: an aligned table on standard output.
        case table
    }

    public var entity: String
    public var whereClause: String?
    /// Nil selects every declared column.
    public var select: [Item]?
    public var groupBy: [String] = []
    public var orderBy: [Order] = []
    public var limit: Int?
    public var output: Output?
    /// `as:` publishes the first row as `${NAME.COLUMN}`.
    public var publishAs: String?
    public var params: [String: ParamTemplate] = [:]
    public var batchSize: Int?

    public init(entity: String) {
        self.entity = entity
    }

    /// The result columns' names, given the entity (needed when `select` is omitted).
    public func resultColumns(of entity: Entity) -> [String] {
        select?.map(\.name) ?? entity.columnNames
    }

    /// The same read as a library `RowRequest`.
    public func rowRequest(params: [String: StoreValue]) -> RowRequest {
        var request = RowRequest(entity: entity, select: select, where: whereClause, params: params, limit: limit)
        request.groupBy = groupBy
        request.orderBy = orderBy
        return request
    }

    public func sql(for entity: Entity) -> String {
        rowRequest(params: [:]).sql(for: entity)
    }
}
