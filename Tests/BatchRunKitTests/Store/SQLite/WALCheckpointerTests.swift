import Foundation
import GRDB
import Testing
@testable import BatchRunSQLite

/// An SQLite store's WAL checkpoints: taken beside the writer by a connection of their own, and
/// by the writer itself only once the WAL passes 4,000 pages, so the WAL starts over.
@Suite("WAL checkpoints beside the writer")
struct WALCheckpointerTests {
    /// A fresh store with one table of blobs, in a folder of its own (removed after `body`).
    func withStore(_ body: (SQLiteBackend, _ path: String) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("batchrun-wal-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("s.sqlite").path
        let backend = try SQLiteBackend(path: path, busyTimeout: 5)
        try backend.pool.write { db in try db.execute(sql: "CREATE TABLE t (x BLOB)") }
        try body(backend, path)
    }

    /// `times` commits of about 200 pages each (50 rows of 16,000 bytes).
    func commit(_ backend: SQLiteBackend, times: Int) throws {
        for _ in 0..<times {
            try backend.pool.write { db in
                for _ in 0..<50 { try db.execute(sql: "INSERT INTO t VALUES (randomblob(16000))") }
            }
        }
    }

    func size(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
    }

    @Test("past 1,000 WAL pages, a connection of its own copies them into the database file (below 4,000 the writer does not)")
    func checkpointsBeside() throws {
        try withStore { backend, path in
            let before = size(path)
            try commit(backend, times: 6)   // about 1,200 pages
            // The checkpoint runs on its own thread after the commit that asked for it: waited for.
            let deadline = Date().addingTimeInterval(30)
            while backend.checkpointer.checkpointsBeside == 0 && Date() < deadline { usleep(10_000) }
            #expect(backend.checkpointer.checkpointsBeside >= 1)
            #expect(size(path) >= before + 4_000_000, "the pages are in the database file")
            #expect(try backend.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM t") } == 300)
        }
    }

    @Test("however long the writer writes, the WAL stays under about 4,000 pages: past them the writer checkpoints and the WAL starts over")
    func walStaysBounded() throws {
        try withStore { backend, path in
            try commit(backend, times: 40)   // about 8,000 pages, 32 MB
            // A WAL file keeps the size it once reached: this is its largest.
            #expect(size(path + "-wal") <= (4_000 + 250) * (4_096 + 24) + 32)
            #expect(size(path) >= 25_000_000)
            #expect(backend.checkpointer.checkpointsBeside >= 1, "checkpoints beside the writer as it wrote")
            #expect(try backend.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM t") } == 2_000)
        }
    }
}
