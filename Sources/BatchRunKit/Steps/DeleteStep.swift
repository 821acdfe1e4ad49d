/// `delete`: removes the rows matching `where` (`where: all` removes every row).
public struct DeleteStep: Sendable, Hashable {
    public var entity: String
    /// Nil means every row (`where: all`).
    public var whereClause: String?
    public var params: [String: ParamTemplate] = [:]
    public var batchSize: Int?

    public init(entity: String, whereClause: String?) {
        self.entity = entity
        self.whereClause = whereClause
    }

    /// One batch: delete up to `:_batchrun_limit` matching rows by rowid.
    public func batchSQL(for entity: Entity) -> String {
        let table = SQL.quote(entity.tableName)
        let filter = whereClause.map { " WHERE (\($0))" } ?? ""
        return "DELETE FROM \(table) WHERE rowid IN (SELECT rowid FROM \(table)\(filter) LIMIT :_batchrun_limit)"
    }
}
