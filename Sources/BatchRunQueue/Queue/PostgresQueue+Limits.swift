#if PostgreSQL
import BatchRunContext
import BatchRunStore
import Foundation

/// Group limits in PostgreSQL (`batchrun limit`, JOBFILE.md 17): a row of `_batchrun_group`
/// per limited group, and `_batchrun_group_start`, when the group's items started within its
/// rate's period. A claim of a group's item locks the group's row (`FOR UPDATE SKIP LOCKED`) and
/// counts in the claim's own transaction: two workers never count for one group at once, and
/// each sees the claims committed before it; one that finds the row taken passes over the group.
extension PostgresQueue {
    /// The limited groups.
    static let groupTable = Entity(name: "_batchrun_group", columns: [
        Column(name: "name", type: .text, isPrimaryKey: true),
        Column(name: "running_limit", type: .integer),
        Column(name: "rate_limit", type: .integer),
        Column(name: "rate_period", type: .real),
    ], primaryKey: ["name"])

    /// The starts of rate-limited groups' items within their periods (older ones are deleted as
    /// claims go).
    static let groupStartTable = Entity(name: "_batchrun_group_start", columns: [
        Column(name: "id", type: .integer, isPrimaryKey: true),
        Column(name: "item_group", type: .text, notNull: true),
        Column(name: "started_at", type: .datetime, notNull: true),
    ], primaryKey: ["id"], indexes: [["item_group", "started_at"]])

    /// The groups whose running items or starts within their period are at their limit now:
    /// their items are not looked at by this claim (a group may free up meanwhile; the next claim sees it).
    func groupsAtLimit(in db: StoreConnection) throws -> [String] {
        try db.rows("""
            SELECT g.name FROM _batchrun_group AS g
            WHERE (g.running_limit IS NOT NULL
                   AND (SELECT count(*) FROM _batchrun_queue AS q WHERE q.item_group = g.name AND q.state = 'running') >= g.running_limit)
               OR (g.rate_limit IS NOT NULL
                   AND (SELECT count(*) FROM _batchrun_group_start AS s WHERE s.item_group = g.name
                        AND s.started_at > clock_timestamp() - g.rate_period * interval '1 second') >= g.rate_limit)
            """).compactMap { $0.first?.string }
    }

    /// True when an item of `group` may start now; then its start is counted. The group's row
    /// stays locked until the claim commits. A row another claim holds is not waited for (two
    /// claims that each hold one group's row and want the other's would deadlock): the group
    /// counts as at its limit for this claim, and the next one sees.
    func admitsStart(of group: String, in db: StoreConnection) throws -> Bool {
        guard let limit = try db.namedRows("SELECT running_limit, rate_limit, rate_period FROM _batchrun_group WHERE name = ? FOR UPDATE SKIP LOCKED",
                                           [.text(group)]).first else {
            return try db.value("SELECT 1 FROM _batchrun_group WHERE name = ?", [.text(group)]) == nil
        }
        if let running = limit["running_limit"].int64,
           try db.value("SELECT count(*) FROM _batchrun_queue WHERE item_group = ? AND state = 'running'", [.text(group)])?.int64 ?? 0 >= running {
            return false
        }
        guard let rate = limit["rate_limit"].int64, let period = limit["rate_period"].double else { return true }
        try db.execute("DELETE FROM _batchrun_group_start WHERE item_group = ? AND started_at <= clock_timestamp() - ? * interval '1 second'",
                       [.text(group), .real(period)])
        if try db.value("SELECT count(*) FROM _batchrun_group_start WHERE item_group = ?", [.text(group)])?.int64 ?? 0 >= rate { return false }
        try db.execute("INSERT INTO _batchrun_group_start (item_group, started_at) VALUES (?, clock_timestamp())", [.text(group)])
        return true
    }

    /// Sets a group's limits (replacing what it had); an empty limit removes them. Wakes idle
    /// workers, which may now claim more of the group.
    package func setLimit(_ limit: QueueGroupLimit) throws {
        try store.writeRecords { db in
            if limit.isEmpty {
                try db.execute("DELETE FROM _batchrun_group WHERE name = ?", [.text(limit.group)])
            } else {
                try db.execute("""
                    INSERT INTO _batchrun_group (name, running_limit, rate_limit, rate_period) VALUES (?::text, ?::bigint, ?::bigint, ?::double precision)
                    ON CONFLICT (name) DO UPDATE SET running_limit = excluded.running_limit, rate_limit = excluded.rate_limit,
                        rate_period = excluded.rate_period
                    """, [.text(limit.group), limit.running.map { .integer(Int64($0)) } ?? .null,
                          limit.rate.map { .integer(Int64($0.count)) } ?? .null, limit.rate.map { .real($0.period) } ?? .null])
            }
            _ = try db.value("SELECT pg_notify(?, '')", [.text(Self.channel)])
        }
    }

    /// Every limited group, by name.
    package func limits() throws -> [QueueGroupLimit] {
        try store.readRecords { db in
            try db.namedRows("SELECT name, running_limit, rate_limit, rate_period FROM _batchrun_group ORDER BY name", []).map { row in
                QueueGroupLimit(group: row["name"].string ?? "", running: row["running_limit"].int,
                                rate: row["rate_limit"].int.flatMap { count in row["rate_period"].double.map { .init(count: count, period: $0) } })
            }
        }
    }
}
#endif
