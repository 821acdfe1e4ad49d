import BatchRunStore

/// A batch read inside its save, for the batch loops of `delete` and `batch-update` on a store
/// whose writers lock only their rows (PostgreSQL): when nothing at all was committed to the
/// store since `generation`, the save's transaction reads the batch's keys and runs the
/// batch's set-based statement over them, the same as a read followed by a save with nothing
/// committed between, without carrying the rows to the context and back.
extension ContextCore {
    /// Thrown inside the save to roll it back: something was committed since, or no row is left.
    private struct ReadAsUsual: Error {}

    /// Reads up to `request.limit` keys of `request` and runs `statement(first, last)` over them
    /// in one save through the one save path, with `checkpoint(last)` in its transaction. Nil
    /// when the store changed since `generation` or no row is left (nothing was written: read
    /// the batch as usual).
    package func saveReadingKeys(_ request: FetchRequest, since generation: UInt64, deleting: Bool,
                         statement: (ObjectID, ObjectID) -> BulkChange,
                         checkpoint: ((ObjectID) -> CheckpointWrite)?) throws -> (count: Int, last: ObjectID, result: SaveResult)? {
        guard let entity = store.model[request.entity] else { throw ContextError.unknownEntity(request.entity) }
        var last: ObjectID?
        let write: CheckpointWrite? = checkpoint.map { checkpoint in
            { db, changes in try checkpoint(last!)(db, changes) }
        }
        do {
            let (count, result) = try commit(checkpoint: write) { db, changes -> Int in
                guard try self.store.isUnchanged(since: generation, in: db) else { throw ReadAsUsual() }
                var keys: [[StoreValue]] = []
                keys.reserveCapacity(request.limit ?? 0)
                try db.forEachRow(try db.prepare(request.sql(for: entity, keysOnly: true)), named: request.arguments(), positional: [],
                                  split: entity.primaryKey.count, assigned: []) { key, _ in keys.append(key) }
                guard let firstKey = keys.first, let lastKey = keys.last else { throw ReadAsUsual() }
                let first = ObjectID(entity: entity.name, key: firstKey)
                last = ObjectID(entity: entity.name, key: lastKey)
                let kind: SaveChanges.Kind = deleting ? .deleted : .updated
                try Self.writeBulk(statement(first, last!), deleted: deleting ? nil : 0, in: db, into: &changes) { changes in
                    for key in keys {
                        if key.count == 1, case .integer(let value) = key[0] {
                            changes.record(rowid: value, entity: entity.name, kind)
                        } else {
                            changes.record(ObjectID(entity: entity.name, key: key), kind)
                        }
                    }
                }
                return keys.count
            }
            return (count, last!, result)
        } catch is ReadAsUsual {
            return nil
        }
    }
}
