import BatchRunFeeds
import BatchRunStore
import BatchRunContext

/// `fetch`: reads rows of an entity from a consistent snapshot, to a file, the terminal or `as:` outputs.
package struct FetchStep: Sendable, Hashable {
    package typealias Item = RowRequest.Item
    package typealias Order = RowRequest.Order

    package enum Output: Sendable, Hashable {
        case csv(String), json(String), ndjson(String)
        /// `-`: an aligned table on standard output.
        case table
    }

    package var entity: String
    package var whereClause: String?
    /// Nil selects every declared column.
    package var select: [Item]?
    package var groupBy: [String] = []
    package var orderBy: [Order] = []
    package var limit: Int?
    package var output: Output?
    /// `as:` publishes the first row as `${NAME.COLUMN}`.
    package var publishAs: String?
    package var params: [String: ParamTemplate] = [:]
    package var batchSize: Int?
    /// The folders a queue worker lets the item write its output in (nil: anywhere).
    package var confinement: PathConfinement?
    /// Where a confined worker lets an `s3://` output connect (nil: anywhere).
    package var network: NetworkRules?

    package init(entity: String) {
        self.entity = entity
    }

    /// The result columns' names, given the entity (needed when `select` is omitted).
    package func resultColumns(of entity: Entity) -> [String] {
        select?.map(\.name) ?? entity.columnNames
    }

    /// The same read as a library `RowRequest`.
    package func rowRequest(params: [String: StoreValue]) -> RowRequest {
        var request = RowRequest(entity: entity, select: select, where: whereClause, params: params, limit: limit)
        request.groupBy = groupBy
        request.orderBy = orderBy
        return request
    }

    package func sql(for entity: Entity) -> String {
        rowRequest(params: [:]).sql(for: entity)
    }
}
