/// Rows a step or job touched, by kind of change.
///
/// ```swift
/// let result = try context.execute(BatchUpdateRequest(entity: "Session", set: ["status": "'stale'"]))
/// print(result.rows.updated)
/// ```
public struct RowCounts: Sendable, Hashable, Codable {
    /// Rows read (a fetch step's matches; a batch update's or delete's rows read before the change).
    public var fetched = 0
    /// Rows inserted (an insert step's new keys, a batch insert's rows).
    public var inserted = 0
    /// Rows changed: an insert's rows whose key was there (under `overwrite`, `storeTrump`...), a batch update's rows.
    public var updated = 0
    /// Rows deleted (a delete step's, a hot swap's keys not brought back, `overwrite`'s unique collisions).
    public var deleted = 0
    package var rejected = 0

    package init(fetched: Int = 0, inserted: Int = 0, updated: Int = 0, deleted: Int = 0, rejected: Int = 0) {
        self.fetched = fetched
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
        self.rejected = rejected
    }

    package static func + (lhs: RowCounts, rhs: RowCounts) -> RowCounts {
        RowCounts(fetched: lhs.fetched + rhs.fetched, inserted: lhs.inserted + rhs.inserted,
                  updated: lhs.updated + rhs.updated, deleted: lhs.deleted + rhs.deleted,
                  rejected: lhs.rejected + rhs.rejected)
    }

    package static func += (lhs: inout RowCounts, rhs: RowCounts) { lhs = lhs + rhs }
}

/// Batches saved and rolled back.
package struct BatchCounts: Sendable, Hashable, Codable {
    package var committed = 0
    package var rolledBack = 0

    package init(committed: Int = 0, rolledBack: Int = 0) {
        self.committed = committed
        self.rolledBack = rolledBack
    }

    package enum CodingKeys: String, CodingKey {
        case committed
        case rolledBack = "rolled_back"
    }

    package static func += (lhs: inout BatchCounts, rhs: BatchCounts) {
        lhs.committed += rhs.committed
        lhs.rolledBack += rhs.rolledBack
    }
}
