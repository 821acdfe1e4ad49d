import Foundation
import GRDB
@testable import BatchRunKit

/// A store in a fresh temporary folder, with an `Account` entity, for context tests.
struct TestStore {
    static let model = Model(entities: [
        Entity(name: "Account", columns: [
            Column(name: "id", type: .integer, isPrimaryKey: true),
            Column(name: "owner", type: .text, notNull: true),
            Column(name: "balance", type: .integer),
            Column(name: "status", type: .text, notNull: true, defaultLiteral: "'open'"),
        ], primaryKey: ["id"], uniques: [["owner"]]),
    ])

    let folder: URL
    let store: Store

    init(rows: Int = 1) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("batchrun-ctx-\(UUID().uuidString)")
        store = try Store(path: folder.appendingPathComponent("s.sqlite").path, model: Self.model)
        try store.pool.write { db in
            for id in 0..<rows {
                try db.execute(sql: "INSERT INTO Account (id, owner, balance, status) VALUES (?, ?, 10, 'open')",
                               arguments: [id + 1, id == 0 ? "ann" : "owner\(id + 1)"])
            }
        }
    }

    var path: String { store.path }

    /// Another program's connection to the same file.
    func outside(_ sql: String) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        try queue.write { db in try db.execute(sql: sql) }
    }

    func row(_ id: Int) throws -> (owner: String, balance: Int?, status: String)? {
        try store.pool.read { db in
            try Row.fetchOne(db, sql: "SELECT owner, balance, status FROM Account WHERE id = ?", arguments: [id])
                .map { ($0["owner"], $0["balance"], $0["status"]) }
        }
    }

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
    static func records(_ name: String, _ bytes: [UInt8], format: FeedFormat) throws -> [FeedRecord] {
        let path = try write(name, bytes)
        defer { try? FileManager.default.removeItem(atPath: path) }
        var reader = try FeedReaders.open(path: path, format: format, displayPath: name)
        var result: [FeedRecord] = []
        while let record = try reader.next() { result.append(record) }
        return result
    }
}
