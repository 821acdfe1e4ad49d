import BatchRunStore

/// What an insert that may have collided wrote (`SaveWriter.insert`,
/// `ConflictResolver.resolveConstraint`): the row written, whether it is a new row, the rows
/// `overwrite` deleted because they held one of its unique values under another key, and the
/// conflict.
///
/// ```swift
/// let outcome = try writer.insert(columns: ["id", "code"], values: [.integer(2), .text("x")])
/// outcome.record(in: &changes)   // key 2 inserted, the row that held code x deleted
/// ```
package struct InsertOutcome {
    /// The key of the row written; nil when nothing was (the feed row dropped, the store's row kept).
    package var id: ObjectID?
    /// True when `id` is a new row; false when the row was there before (an update). A key that
    /// `overwrite` deleted and wrote again is an update: its row keeps its identity, whatever
    /// refers to it stays valid, and no delete rule runs for it (as PostgreSQL's `ON CONFLICT DO
    /// UPDATE`, and SQLite's `REPLACE`, which fires no delete trigger).
    package var inserted: Bool
    /// Rows `overwrite` deleted under other keys than `id`.
    package var deleted: [ObjectID] = []
    package var conflict: MergeConflict?

    /// Names and counts the rows in `changes`: `id` inserted or updated, `deleted` deleted.
    package func record(in changes: inout SaveChanges) {
        if let id {
            changes.record(id, inserted ? .inserted : .updated)
            if inserted { changes.inserted += 1 } else { changes.updated += 1 }
        }
        changes.recordReplaced(deleted)
    }
}
