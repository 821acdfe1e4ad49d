import BatchRunStore

/// Core Data's `NSBatchInsertRequest`: inserts rows given as values, batch by batch, run by
/// `Context.execute(_:)`, each batch one save. A row whose key or unique column is taken is a
/// constraint conflict resolved by the context's merge policy. `replacingAll: true` is a hot
/// swap: every row of the table is replaced by these in one transaction, so a reader sees the
/// old rows or the new ones, never a mix.
///
/// ```swift
/// let rows: [[String: StoreValue]] = [["id": 1, "user": "ann"], ["id": 2, "user": "bob"]]
/// let result = try await context.perform { try $0.execute(BatchInsertRequest(entity: "Session", rows: rows)) }
/// print(result.rows.inserted)
/// ```
public struct BatchInsertRequest: Sendable {
    package var entity: String
    package var rows: [[String: StoreValue]]
    package var replacingAll: Bool
    package var batchSize: Int

    public init(entity: String, rows: [[String: StoreValue]], replacingAll: Bool = false, batchSize: Int = 1_000) {
        self.entity = entity
        self.rows = rows
        self.replacingAll = replacingAll
        self.batchSize = batchSize
    }
}
