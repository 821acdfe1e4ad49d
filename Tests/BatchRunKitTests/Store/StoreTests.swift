import Foundation
import GRDB
import Synchronization
import Testing
@testable import BatchRunKit
@_spi(BatchRunPackage) import BatchRunStore

@Suite("Store")
struct StoreTests {
    static let model = Model(entities: [
        Entity(name: "Session", columns: [
            Column(name: "id", type: .integer, isPrimaryKey: true),
            Column(name: "user", type: .text, notNull: true),
            Column(name: "status", type: .text, notNull: true, defaultLiteral: "'open'"),
            Column(name: "ok", type: .boolean),
        ], primaryKey: ["id"], uniques: [["user", "status"]], indexes: [["status"]]),
        Entity(name: "Pair", columns: [Column(name: "a", type: .integer), Column(name: "b", type: .text)], primaryKey: ["a", "b"]),
    ])

    func temporaryPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("batchrun-store-\(UUID().uuidString)/nested/s.sqlite").path
    }

    @Test("an interrupt stops every transaction registered at that moment (an import's sessions), nested or side by side, and none registered after it runs")
    func interruptStopsEveryRegistered() throws {
        let interrupter = Interrupter()
        let stopped = Mutex<[String]>([])
        struct Stopped: Error {}
        try interrupter.running(stoppedBy: { stopped.withLock { $0.append("outer") } }, orThrow: { Stopped() }) {
            try interrupter.running(stoppedBy: { stopped.withLock { $0.append("inner") } }, orThrow: { Stopped() }) {
                interrupter.interrupt()
            }
        }
        #expect(stopped.withLock { $0.sorted() } == ["inner", "outer"])
        #expect(throws: Stopped.self) { try interrupter.running(stoppedBy: {}, orThrow: { Stopped() }) {} }
        // Once they ended, a later interrupt calls none of them.
        interrupter.interrupt()
        #expect(stopped.withLock { $0.count } == 2)
    }

    @Test("an interrupt stops the statement after it, not only one in flight; work started after it does not run; nothing is written")
    func interruptBetweenStatements() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().deletingLastPathComponent().path) }
        let store = try Store(path: path, model: Self.model)
        let interrupter = Interrupter()
        let million = "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 1000000) "
        var secondRan = false
        let error = #expect(throws: DatabaseError.self) {
            try store.backend.write(interruptedBy: interrupter) { db in
                try db.execute("INSERT INTO Session (id, user) VALUES (1, 'ann')")
                interrupter.interrupt()   // no statement runs now: SQLite's own flag would forget it
                try db.execute(million + "INSERT INTO Session (id, user) SELECT i + 1, 'u' || i FROM c")
                secondRan = true
            }
        }
        #expect(error?.resultCode == .SQLITE_INTERRUPT && !secondRan)
        var started = false
        #expect(throws: DatabaseError.self) {
            try store.backend.read(interruptedBy: interrupter) { _ in started = true }
        }
        #expect(!started)
        // The write rolled back; other work on the store goes on.
        #expect(try store.backend.read(interruptedBy: nil) { db in try db.value("SELECT count(*) FROM Session") } == 0)
        _ = try store.backend.write(interruptedBy: Interrupter()) { db in
            try db.execute(million + "SELECT count(*) FROM c")
        }
    }

    @Test("creates the folder, the file in WAL mode, tables, constraints and indexes")
    func creates() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().deletingLastPathComponent().path) }
        let store = try Store(path: path, model: Self.model)
        try store.pool.write { db in
            #expect(try String.fetchOne(db, sql: "PRAGMA journal_mode") == "wal")
            #expect(try db.columns(in: "Session").map(\.name) == ["id", "user", "status", "ok"])
            #expect(try db.primaryKey("Pair").columns == ["a", "b"])
            #expect(try db.indexes(on: "Session").contains { $0.columns == ["status"] && !$0.isUnique })
            #expect(try db.indexes(on: "Session").contains { $0.columns == ["user", "status"] && $0.isUnique })
            try db.execute(sql: "INSERT INTO Session (id, user) VALUES (1, 'ann')")
            #expect(try String.fetchOne(db, sql: "SELECT status FROM Session") == "open")
            #expect(throws: DatabaseError.self) { try db.execute(sql: "INSERT INTO Session (id, user) VALUES (2, NULL)") }
            let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            #expect(tables == ["Pair", "Session"])
        }
        // Opening again keeps the data and changes nothing.
        let again = try Store(path: path, model: Self.model)
        #expect(try again.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM Session") } == 1)
    }

    @Test("an existing table with extra columns is used as it is")
    func extraColumns() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().deletingLastPathComponent().path) }
        try FileManager.default.createDirectory(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path, withIntermediateDirectories: true)
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "CREATE TABLE Session (id INTEGER PRIMARY KEY, user TEXT, status TEXT, ok INTEGER, notes TEXT)")
        }
        let store = try Store(path: path, model: Self.model)
        #expect(try store.pool.read { db in try db.columns(in: "Session").map(\.name) }.contains("notes"))
    }

    @Test("an existing table that lacks declared columns gets them, with its unique and index, recorded in _batchrun_schema")
    func missingColumns() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().deletingLastPathComponent().path) }
        try FileManager.default.createDirectory(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path, withIntermediateDirectories: true)
        try DatabaseQueue(path: path).write { db in try db.execute(sql: "CREATE TABLE Session (id INTEGER PRIMARY KEY, user TEXT)") }
        let store = try Store(path: path, model: Self.model)
        let (columns, indexes, history) = try store.pool.read { db in
            (try db.columns(in: "Session").map(\.name), try db.indexes(on: "Session").map { "\($0.isUnique ? "unique " : "")\($0.columns)" }.sorted(),
             try String.fetchAll(db, sql: "SELECT change FROM _batchrun_schema ORDER BY id"))
        }
        #expect(columns == ["id", "user", "status", "ok"])
        #expect(indexes == ["[\"status\"]", "unique [\"user\", \"status\"]"])
        #expect(history == ["added column status text not null default 'open'", "added column ok boolean", "created unique (user, status)", "created index on (status)"])
        #expect(try DatabaseQueue(path: path).read { db in try db.tableExists("Pair") })
    }

    @Test("a table with rows that cannot get a not-null column without default stops before anything is created")
    func refusedColumns() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().deletingLastPathComponent().path) }
        try FileManager.default.createDirectory(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path, withIntermediateDirectories: true)
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "CREATE TABLE Session (id INTEGER PRIMARY KEY, status TEXT)")
            try db.execute(sql: "INSERT INTO Session VALUES (1, 'open')")
        }
        #expect {
            _ = try Store(path: path, model: Self.model)
        } throws: { error in
            "\(error)".hasPrefix("Session: cannot add column user text not null: the table Session has rows")
                && "\(error)".hasSuffix("the store's schema was not changed")
        }
        let (pair, columns) = try DatabaseQueue(path: path).read { db in (try db.tableExists("Pair"), try db.columns(in: "Session").map(\.name)) }
        #expect(!pair)
        #expect(columns == ["id", "status"])
    }

    @Test("a save's keys recorded in any order make one range per run of consecutive keys")
    func keysInAnyOrder() {
        var changes = SaveChanges(wantsIDs: false)
        var keys = Array(Int64(1)...5000) + Array(Int64(7001)...7100)
        keys.shuffle()
        changes.record(contentsOf: keys.map { ObjectID(entity: "Account", single: .integer($0)) }, entity: "Account", .updated)
        #expect(changes.changedKeys.map(\.keys.ranges) == [[1...5000, 7001...7100]])
    }
}
