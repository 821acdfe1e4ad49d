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
}
