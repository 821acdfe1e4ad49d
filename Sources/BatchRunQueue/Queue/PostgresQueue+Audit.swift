#if PostgreSQL
import BatchRunContext
import BatchRunStore
import Foundation

/// A PostgreSQL queue's audit log: the table `_batchrun_audit`.
extension PostgresQueue {
    static let auditTable = Entity(name: "_batchrun_audit", columns: [
        Column(name: "id", type: .integer, isPrimaryKey: true),
        Column(name: "at", type: .text, notNull: true),
        Column(name: "who", type: .text, notNull: true),
        Column(name: "action", type: .text, notNull: true),
        Column(name: "item", type: .text),
    ], primaryKey: ["id"])

    package func appendAudit(_ entry: QueueAuditEntry) throws {
        try store.writeRecords { db in
            _ = try db.execute("INSERT INTO _batchrun_audit (at, who, action, item) VALUES (?, ?, ?, ?)",
                           [.text(entry.at), .text(entry.who), .text(entry.action), entry.item.map(StoreValue.text) ?? .null])
        }
    }

    package func audit() throws -> [QueueAuditEntry] {
        try store.readRecords { db in
            try db.namedRows("""
                SELECT at, who, action, item FROM (SELECT * FROM _batchrun_audit ORDER BY id DESC LIMIT \(QueueAuditEntry.listed)) AS newest ORDER BY id
                """, []).map { row in
                var entry = QueueAuditEntry(who: row["who"].string ?? "", action: row["action"].string ?? "", item: row["item"].string)
                entry.at = row["at"].string ?? ""
                return entry
            }
        }
    }
}
#endif
