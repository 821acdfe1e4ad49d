import Foundation
import GRDB

/// Reads an SQLite file the way a test checks what a run left behind.
struct StoreInspector {
    let queue: DatabaseQueue

    init(path: String) throws {
        var configuration = Configuration()
        configuration.readonly = true
        queue = try DatabaseQueue(path: path, configuration: configuration)
    }

    func count(_ sql: String, _ arguments: StatementArguments = []) throws -> Int {
        try queue.read { db in try Int.fetchOne(db, sql: sql, arguments: arguments) ?? -1 }
    }

    func strings(_ sql: String) throws -> [String] {
        try queue.read { db in try String.fetchAll(db, sql: sql) }
    }

    func journalMode() throws -> String {
        try queue.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") ?? "" }
    }
}
