import BatchRunStore

/// A batch's changes as one set-based statement, which a save may run instead of checking
/// each row when nothing at all was committed to the store since the batch was read: every
/// row is then exactly as read, so the statement changes exactly the rows read, as read.
///
/// ```swift
/// // The rows of this batch: id 1001 to 2000 matching the step's where.
/// let bulk = BulkChange.keyRange(entity, from: first, to: last) { range in
///     "UPDATE \"Session\" SET \"status\" = ('stale') WHERE (status = 'open') AND \(range)"
/// }
/// try context.save(bulk: bulk)
/// ```
package struct BulkChange: Sendable {
    package var sql: String
    package var params: [String: StoreValue]

    package init(sql: String, params: [String: StoreValue]) {
        self.sql = sql
        self.params = params
    }

    /// A statement limited to primary keys from `first` to `last`; `make` gets the range condition.
    package static func keyRange(_ entity: Entity, from first: ObjectID, to last: ObjectID, params: [String: StoreValue],
                                _ make: (String) -> String) -> BulkChange {
        let keys = entity.primaryKey.map(SQL.quote)
        let low = first.key.indices.map { ":_batchrun_lo\($0)" }
        let high = last.key.indices.map { ":_batchrun_hi\($0)" }
        let range = keys.count == 1
            ? "\(keys[0]) BETWEEN \(low[0]) AND \(high[0])"
            : "(\(keys.joined(separator: ", "))) >= (\(low.joined(separator: ", "))) AND (\(keys.joined(separator: ", "))) <= (\(high.joined(separator: ", ")))"
        var all = params
        for (index, value) in first.key.enumerated() { all["_batchrun_lo\(index)"] = value }
        for (index, value) in last.key.enumerated() { all["_batchrun_hi\(index)"] = value }
        return BulkChange(sql: make(range), params: all)
    }
}
