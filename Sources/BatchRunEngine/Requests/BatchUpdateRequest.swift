import BatchRunStore

/// Core Data's `NSBatchUpdateRequest`: sets columns from SQL expressions on every row that
/// matches `where`, batch by batch, run by `Context.execute(_:)`. Each batch is read with the
/// expressions evaluated in that read and saved through the context's one save path, checked
/// against the rows as read: a row another context or program changed meanwhile is a conflict,
/// resolved by the context's merge policy (`recompute` evaluates the expressions again).
///
/// ```swift
/// let request = BatchUpdateRequest(entity: "Session", set: ["status": "'stale'"],
///                                  where: "status = 'open' AND started_at < :cutoff", params: ["cutoff": "2026-01-01"])
/// let result = try await context.perform { try $0.execute(request) }
/// print(result.rows.updated, result.conflicts.count)
/// ```
public struct BatchUpdateRequest: Sendable {
    package var entity: String
    package var assignments: [BatchUpdateStep.Assignment]
    package var whereClause: String?
    package var params: [String: StoreValue]
    package var batchSize: Int

    /// `set`: column to SQL expression, in the order given; `where`: nil for every row.
    public init(entity: String, set: KeyValuePairs<String, String>, where whereClause: String? = nil,
                params: [String: StoreValue] = [:], batchSize: Int = 1_000) {
        self.entity = entity
        assignments = set.map { BatchUpdateStep.Assignment(column: $0.key, expression: $0.value) }
        self.whereClause = whereClause
        self.params = params
        self.batchSize = batchSize
    }
}
