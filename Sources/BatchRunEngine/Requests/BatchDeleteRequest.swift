import BatchRunStore

/// Core Data's `NSBatchDeleteRequest`: deletes every row that matches `where`, batch by batch,
/// run by `Context.execute(_:)`. Each batch is one save that checks every row is still as read;
/// a row changed meanwhile is a conflict resolved by the context's merge policy (under
/// `recompute`, deleted only if it still matches `where`).
///
/// ```swift
/// let result = try await context.perform {
///     try $0.execute(BatchDeleteRequest(entity: "Session", where: "status = 'stale'"))
/// }
/// print(result.rows.deleted)
/// ```
public struct BatchDeleteRequest: Sendable {
    package var entity: String
    package var whereClause: String?
    package var params: [String: StoreValue]
    package var batchSize: Int

    /// `where`: nil deletes every row.
    public init(entity: String, where whereClause: String?, params: [String: StoreValue] = [:], batchSize: Int = 1_000) {
        self.entity = entity
        self.whereClause = whereClause
        self.params = params
        self.batchSize = batchSize
    }
}
