import BatchRunStore
import Foundation

/// Checkpoints for library code: a value saved in the same transaction as a batch, read back
/// when the work starts again, so a restarted loop continues after the last committed batch.
///
/// ```swift
/// let copy = BatchOperation<Void>(name: "copy", store: store) { operation, context in
///     var request = FetchRequest(entity: "Session", limit: 1_000)
///     if let last = try context.checkpoint { request.after = ObjectID(entity: "Session", key: [last]) }
///     while !operation.isCancelled {
///         let batch = try context.fetch(request)
///         guard let last = batch.last?.objectID else { break }
///         for session in batch { try session.set("status", to: "copied") }
///         try context.save(checkpoint: last.key[0])   // the batch and its checkpoint, or neither
///         context.reset()
///         request.after = last
///     }
/// }
/// ```
extension Context {
    /// Saves every change as `save()` does and, in the same transaction, `checkpoint` under this
    /// context's name (`nil` clears it): the batch and its checkpoint commit together or not at all.
    @discardableResult
    public func save(checkpoint: StoreValue?) throws -> SaveResult {
        let name = self.name
        return try save(bulk: nil, forgetting: false) { db, _ in
            try Self.createCheckpointTable(db)
            if let checkpoint {
                try db.execute("INSERT INTO _batchrun_checkpoints (name, value) VALUES (?, ?) "
                               + "ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                               [.text(name), .text(String(decoding: try JSONEncoder().encode(checkpoint), as: UTF8.self))])
            } else {
                try db.execute("DELETE FROM _batchrun_checkpoints WHERE name = ?", [.text(name)])
            }
        }
    }

    /// The checkpoint saved last under this context's name, or nil.
    public var checkpoint: StoreValue? {
        get throws {
            let name = self.name
            let text = try read { db -> String? in
                guard try db.tableExists("_batchrun_checkpoints") else { return nil }
                return try db.value("SELECT value FROM _batchrun_checkpoints WHERE name = ?", [.text(name)])?.string
            }
            return try text.map { try JSONDecoder().decode(StoreValue.self, from: Data($0.utf8)) }
        }
    }

    private static func createCheckpointTable(_ db: any StoreConnection) throws {
        try db.execute("CREATE TABLE IF NOT EXISTS _batchrun_checkpoints (name TEXT PRIMARY KEY, value TEXT NOT NULL)")
    }
}
