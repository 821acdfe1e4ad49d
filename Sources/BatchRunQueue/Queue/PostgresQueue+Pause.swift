#if PostgreSQL
import BatchRunContext
import BatchRunStore
import Foundation

/// Pausing a PostgreSQL queue (`batchrun pause`, JOBFILE.md 18): a row of `_batchrun_pause` per
/// paused group, and one with the empty name for the whole queue. Every claim reads them in its
/// own transaction; workers claim at least once a second, so nothing new starts within a
/// second of the pause's commit.
extension PostgresQueue {
    static let pauseTable = Entity(name: "_batchrun_pause", columns: [
        Column(name: "scope", type: .text, isPrimaryKey: true),
        Column(name: "paused_at", type: .datetime, notNull: true, defaultLiteral: "CURRENT_TIMESTAMP"),
    ], primaryKey: ["scope"])

    package func setPaused(_ paused: Bool, group: String?) throws {
        try store.writeRecords { db in
            if paused {
                try db.execute("INSERT INTO _batchrun_pause (scope) VALUES (?) ON CONFLICT (scope) DO NOTHING", [.text(group ?? "")])
            } else {
                try db.execute("DELETE FROM _batchrun_pause WHERE scope = ?", [.text(group ?? "")])
                _ = try db.value("SELECT pg_notify(?, '')", [.text(Self.channel)])
            }
        }
    }

    package func pause() throws -> QueuePause {
        try store.readRecords { db in try pause(in: db) }
    }

    /// What is paused, as the transaction `db` sees it.
    func pause(in db: StoreConnection) throws -> QueuePause {
        let scopes = try db.rows("SELECT scope FROM _batchrun_pause ORDER BY scope").compactMap { $0.first?.string }
        return QueuePause(queue: scopes.contains(""), groups: scopes.filter { !$0.isEmpty })
    }
}
#endif
