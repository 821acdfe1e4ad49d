/// `delete`: removes the rows matching `where` (`where: all` removes every row).
package struct DeleteStep: Sendable, Hashable {
    package var entity: String
    /// Nil means every row (`where: all`).
    package var whereClause: String?
    package var params: [String: ParamTemplate] = [:]
    package var batchSize: Int?

    package init(entity: String, whereClause: String?) {
        self.entity = entity
        self.whereClause = whereClause
    }
}
