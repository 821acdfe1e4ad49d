import Foundation
import GRDB
@testable import BatchRunKit
import TestSupport

/// The database a `TestStore` is on: an SQLite file, or a fresh database on the throwaway
/// PostgreSQL server (`PostgresServer`).
enum TestBackend: String, CaseIterable, Sendable, CustomStringConvertible {
    case sqlite, postgres

    var description: String { rawValue }
}

/// A store with an `Account` entity, for context tests: in a fresh temporary folder (SQLite), or
/// in a fresh database on the test process's PostgreSQL server. Outside SQL (`outside(_:)`) is
/// run by another program or connection; write the table as `"Account"` (quoted, the entity's
/// table name) so it reads the same on both.
struct TestStore {
    static let model = Model(entities: [
        Entity(name: "Account", columns: [
            Column(name: "id", type: .integer, isPrimaryKey: true),
            Column(name: "owner", type: .text, notNull: true),
            Column(name: "balance", type: .integer),
            Column(name: "status", type: .text, notNull: true, defaultLiteral: "'open'"),
        ], primaryKey: ["id"], uniques: [["owner"]]),
    ])

    let backend: TestBackend
    /// The SQLite store's folder (nothing is made there on PostgreSQL).
    let folder: URL
    /// The PostgreSQL database's URL (nil on SQLite).
    let postgresURL: String?
    let store: Store

    /// `rows` accounts: id 1 is owned by "ann", id N by "ownerN"; balance 10, status 'open'.
    init(rows: Int = 1, backend: TestBackend = .sqlite) throws {
        self.backend = backend
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("batchrun-ctx-\(UUID().uuidString)")
        switch backend {
        case .sqlite:
            postgresURL = nil
            store = try Store(path: folder.appendingPathComponent("s.sqlite").path, model: Self.model)
            try store.pool.write { db in
                for id in 0..<rows {
                    try db.execute(sql: "INSERT INTO Account (id, owner, balance, status) VALUES (?, ?, 10, 'open')",
                                   arguments: [id + 1, id == 0 ? "ann" : "owner\(id + 1)"])
                }
            }
        case .postgres:
            let url = try PostgresServer.database("ctx")
            postgresURL = url
            store = try Store(postgres: url, model: Self.model)
            if rows > 0 {
                // The identity's sequence moved past the given keys, as the store leaves it after its own inserts.
                try PostgresServer.psql(url, """
                    INSERT INTO "Account" (id, owner, balance, status)
                    SELECT g, CASE WHEN g = 1 THEN 'ann' ELSE 'owner' || g END, 10, 'open' FROM generate_series(1, \(rows)) AS g;
                    SELECT setval(pg_get_serial_sequence('"Account"', 'id'), \(rows));
                    """)
            }
        }
    }

    /// The SQLite file, or the PostgreSQL URL.
    var path: String { store.path }

    /// Another writer: on SQLite, another connection to the same file; on PostgreSQL, `psql`.
    func outside(_ sql: String) throws {
        switch backend {
        case .sqlite:
            var configuration = Configuration()
            configuration.busyMode = .timeout(10)
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            try queue.write { db in try db.execute(sql: sql) }
        case .postgres:
            try PostgresServer.psql(postgresURL!, sql)
        }
    }

    /// Runs SQL in another program, the `sqlite3` command on SQLite, `psql` on PostgreSQL; its
    /// exit status (`psql` failing throws, with its output).
    func outsideProgram(_ sql: String) throws -> Int32 {
        switch backend {
        case .sqlite:
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
            process.arguments = [path, sql]
            try process.run()
            process.waitUntilExit()
            return process.terminationStatus
        case .postgres:
            try PostgresServer.psql(postgresURL!, sql)
            return 0
        }
    }

    /// Account `id` as the store holds it now (read outside the store's own connections on
    /// PostgreSQL: through `psql`); nil when there is no such row.
    func row(_ id: Int) throws -> (owner: String, balance: Int?, status: String)? {
        switch backend {
        case .sqlite:
            return try store.pool.read { db in
                try Row.fetchOne(db, sql: "SELECT owner, balance, status FROM Account WHERE id = ?", arguments: [id])
                    .map { ($0["owner"], $0["balance"], $0["status"]) }
            }
        case .postgres:
            let text = try PostgresServer.psql(postgresURL!, """
                SELECT json_build_object('owner', owner, 'balance', balance, 'status', status) FROM "Account" WHERE id = \(id)
                """)
            if text.isEmpty { return nil }
            guard let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
                  let owner = object["owner"] as? String, let status = object["status"] as? String else {
                throw UnexpectedRow(text: text)
            }
            let balance = object["balance"] is NSNull ? nil : (object["balance"] as? NSNumber)?.intValue
            return (owner, balance, status)
        }
    }

    struct UnexpectedRow: Error { let text: String }

    /// Removes the SQLite folder; a PostgreSQL database is left to the throwaway server, which
    /// is removed with everything in it when the test process ends.
    func cleanUp() {
        try? FileManager.default.removeItem(at: folder)
    }
}

/// Feed files for reader tests: written to a temporary path, read back as records.
enum FeedFiles {
    static func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("batchrun-feed-\(UUID().uuidString)-\(name)")
        try Data(bytes).write(to: url)
        return url.path
    }

    /// Every record of a feed; errors name it `name`. The file is removed after.
    static func records(_ name: String, _ bytes: [UInt8], format: FeedFormat, compression: FeedCompression = .none) throws -> [FeedRecord] {
        let path = try write(name, bytes)
        defer { try? FileManager.default.removeItem(atPath: path) }
        var reader = try FeedReaders.open(path: path, format: format, displayPath: name, compression: compression)
        var result: [FeedRecord] = []
        while let record = try reader.next() { result.append(record) }
        return result
    }
}
