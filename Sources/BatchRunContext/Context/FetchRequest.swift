import BatchRunStore

/// What a context fetches: rows of an entity matching `where`, in primary-key order,
/// optionally after a key (for reading in batches), optionally with columns set from
/// expressions evaluated in the same read (a batch update).
///
/// ```swift
/// var request = FetchRequest(entity: "Session", where: "status = :s", params: ["s": .text("open")])
/// request.limit = 1000
/// request.assigning = [("status", "'stale'")]   // objects come back changed, ready to save
/// ```
public struct FetchRequest: Sendable {
    package var entity: String
    package var whereClause: String?
    package var params: [String: StoreValue]
    /// Columns set from expressions evaluated on each row in the same read: the objects come
    /// back with those changes (their snapshots keep the values read).
    public var assigning: [(column: String, expression: String)] = []
    package var limit: Int?
    /// Why a typed filter cannot be read (a value no column holds): fetches and counts throw it.
    package var failure: ContextError?
    /// Only rows whose primary key sorts after this one (keyset pagination).
    public var after: ObjectID?
    /// The objects' order: columns of the entity, each ascending or descending, the primary
    /// key last (empty: primary-key order). NULL comes first ascending and last descending on
    /// both backends; text compares as the database's collation does (SQLite: byte order).
    public var sortedBy: [RowRequest.Order] = []
    /// Objects `MainContext.fetch` registers on the main actor per hop, yielding it between
    /// hops (Core Data's `fetchBatchSize`, for the main actor's sake); 0, the default: 2,000.
    /// The rows are read at once, off the main actor, from one snapshot either way.
    public var fetchBatchSize = 0

    public init(entity: String, where whereClause: String? = nil, params: [String: StoreValue] = [:], limit: Int? = nil) {
        self.entity = entity
        self.whereClause = whereClause
        self.params = params
        self.limit = limit
    }

    /// `keysOnly`: the primary keys of the rows, in order, and nothing else.
    package func sql(for entity: Entity, keysOnly: Bool = false) -> String {
        let computed = keysOnly ? "" : assigning.enumerated().map { ", (\($1.expression)) AS \(SQL.quote("_batchrun_c\($0)"))" }.joined()
        var conditions: [String] = []
        if let whereClause { conditions.append("(\(whereClause))") }
        let keys = entity.primaryKey.map(SQL.quote)
        if after != nil {
            let placeholders = entity.primaryKey.indices.map { ":_batchrun_after\($0)" }
            conditions.append(keys.count == 1 ? "\(keys[0]) > \(placeholders[0])"
                                              : "(\(keys.joined(separator: ", "))) > (\(placeholders.joined(separator: ", ")))")
        }
        var sql = "SELECT \(SQL.quoteList(keysOnly ? entity.primaryKey : entity.columnNames))\(computed) FROM \(SQL.quote(entity.tableName))"
        if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
        let sorts = keysOnly ? [] : sortedBy.map { SQL.quote($0.name) + ($0.descending ? " DESC NULLS LAST" : " ASC NULLS FIRST") }
        sql += " ORDER BY " + (sorts + keys).joined(separator: ", ")
        if let limit { sql += " LIMIT \(limit)" }
        return sql
    }

    package func arguments() -> [String: StoreValue] {
        var arguments = params
        if let after {
            for (index, value) in after.key.enumerated() { arguments["_batchrun_after\(index)"] = value }
        }
        return arguments
    }
}
