#if PostgreSQL
import Foundation

/// A PostgreSQL queue's schedules, in `_batchrun_schedule`. A worker queues a due time with an
/// insert that a unique index on the item's `(schedule, scheduled_for)` lets through once,
/// however many workers on however many machines try; due times come from the server's clock.
extension PostgresQueue {
    package func addSchedule(_ entry: QueueScheduleEntry) throws {
        let params = String(decoding: try JSONEncoder.sorted.encode(entry.params), as: UTF8.self)
        try store.writeRecords { db in
            _ = try db.execute("""
                INSERT INTO _batchrun_schedule (name, job_text, params, directory, cron, tz, created_at)
                VALUES (?::text, ?::text, ?::text, ?::text, ?::text, ?::text, extract(epoch FROM \(Self.now)))
                ON CONFLICT (name) DO UPDATE SET job_text = excluded.job_text, params = excluded.params, directory = excluded.directory,
                    cron = excluded.cron, tz = excluded.tz, created_at = excluded.created_at
                """, [.text(entry.name), .text(entry.text), .text(params), .text(entry.directory), .text(entry.cron.line),
                      .text(entry.cron.timeZone.identifier)])
        }
    }

    package func schedules() throws -> [QueueScheduleEntry] {
        try store.readRecords { db in
            try db.namedRows("SELECT name, job_text, params, directory, cron, tz, created_at FROM _batchrun_schedule ORDER BY name", []).compactMap { row in
                let params = row["params"].string.flatMap { try? JSONDecoder().decode([String: String].self, from: Data($0.utf8)) } ?? [:]
                return try? QueueScheduleEntry(name: row["name"].string ?? "", cron: row["cron"].string ?? "", timeZone: row["tz"].string ?? "UTC",
                                               text: row["job_text"].string ?? "", params: params, directory: row["directory"].string ?? "",
                                               created: Date(timeIntervalSince1970: row["created_at"].double ?? 0))
            }
        }
    }

    package func removeSchedule(named name: String) throws -> Bool {
        try store.writeRecords { db in try db.execute("DELETE FROM _batchrun_schedule WHERE name = ?::text", [.text(name)]) == 1 }
    }

    package func runScheduleNow(named name: String) throws -> String? {
        guard let entry = try schedules().first(where: { $0.name == name }) else { return nil }
        return String(try submit(text: entry.text, name: entry.name + ".yaml", params: entry.params, directory: entry.directory).id)
    }

    /// The server's `now` (moved by the test-only clock offset).
    func serverNow() throws -> Date {
        let seconds = try store.readRecords { db in try db.value("SELECT extract(epoch FROM \(Self.now))::double precision", [])?.double }
        return seconds.map { Date(timeIntervalSince1970: $0) } ?? QueueClock.now()
    }

    package func queueDueSchedules() throws -> [String] {
        let entries = try schedules()
        guard !entries.isEmpty else { return [] }
        let now = try serverNow()
        var queued: [String] = []
        for entry in entries {
            guard let due = entry.dueNow(now) else { continue }
            let id = try store.writeRecords { db -> Int64? in
                let id = try db.value("""
                    INSERT INTO _batchrun_queue (name, job_text, params, directory, run_at, state, schedule, scheduled_for)
                    SELECT name || '.yaml', job_text, params, directory, to_timestamp(?::double precision), 'pending', name,
                        to_timestamp(?::double precision)
                    FROM _batchrun_schedule WHERE name = ?::text
                    ON CONFLICT (schedule, scheduled_for) WHERE schedule IS NOT NULL DO NOTHING RETURNING id
                    """, [.real(due.timeIntervalSince1970), .real(due.timeIntervalSince1970), .text(entry.name)])?.int64
                if id != nil { _ = try db.value("SELECT pg_notify(?, '')", [.text(Self.channel)]) }
                return id
            }
            if let id { queued.append("item \(id) (\(entry.name) due \(due.formatted(Date.ISO8601FormatStyle())))") }
        }
        return queued
    }
}
#endif
