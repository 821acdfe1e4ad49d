import Dispatch
import GRDB
import GRDBSQLite
import Synchronization

/// Copies a WAL store's committed pages into its database file on a thread of its own, beside
/// the writer, instead of in the writer's commit.
///
/// SQLite checkpoints in the committing thread once the WAL passes 1,000 pages: the writer
/// stops to copy about 4 MB and to wait for two fsyncs. With this installed on the writer, a
/// commit past 1,000 pages only asks, and a second connection copies on another core while the
/// writer goes on (an import of 1,000,000 rows: about 15% less time, see docs/benchmarks.md).
/// A checkpoint that runs beside the writer cannot let the WAL start over, as the writer has
/// appended since; so once the WAL passes 4,000 pages the writer checkpoints what is left
/// itself, as SQLite would, and its next transaction starts the WAL from the top: the WAL
/// normally stays under about 16 MB, where SQLite's own stays under about 4 MB (a reader of an
/// old snapshot, or one larger transaction, holds it longer, as with SQLite's own).
///
/// ```swift
/// let checkpointer = WALCheckpointer(path: "var/nightly.sqlite")
/// try pool.writeWithoutTransaction { db in checkpointer.install(on: db) }
/// ```
final class WALCheckpointer: Sendable {
    /// WAL pages past which a commit asks for a checkpoint beside it (SQLite's own threshold).
    static let besidePages: Int32 = 1_000
    /// WAL pages past which the writer checkpoints itself, so the WAL can start over.
    static let writerPages: Int32 = 4_000

    let path: String
    /// Where the checkpoints beside the writer run, one at a time.
    private let queue = DispatchQueue(label: "batchrun.sqlite.checkpoint")
    /// A checkpoint was asked for and has not started yet (later asks join it).
    private let asked = Atomic<Bool>(false)
    /// The checkpointing connection, opened at the first checkpoint, used on `queue` only.
    private let connection = Mutex<OpaquePointer?>(nil)
    /// The checkpointing connection cannot be opened (the file cannot be opened for writing, or
    /// is not a database): the writer checkpoints as SQLite would.
    private let cannotOpen = Atomic<Bool>(false)
    private let besideCount = Atomic<Int>(0)

    init(path: String) {
        self.path = path
    }

    deinit {
        // Not through `queue`: the last reference may go on it. No checkpoint of this
        // checkpointer runs now (a running one holds a reference).
        connection.withLock { handle in
            if let handle { sqlite3_close_v2(handle) }
            handle = nil
        }
    }

    /// How many checkpoints ran beside the writer.
    var checkpointsBeside: Int { besideCount.load(ordering: .relaxed) }

    /// Takes over `db`'s checkpoints (the writer's connection). Undo with `uninstall`.
    func install(on db: Database) {
        sqlite3_wal_hook(db.sqliteConnection, { context, writer, name, pages in
            // SAFETY of the pointer: `install`'s caller keeps the checkpointer alive until it
            // calls `uninstall` on this connection, which removes this hook.
            Unmanaged<WALCheckpointer>.fromOpaque(context!).takeUnretainedValue()
                .committed(writer: writer, database: name, pages: pages)
            return SQLITE_OK
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Gives `db`'s checkpoints back to SQLite (its automatic checkpoint at 1,000 pages).
    func uninstall(from db: Database) {
        sqlite3_wal_autocheckpoint(db.sqliteConnection, Self.besidePages)
    }

    /// After each commit of the writer, with the pages the WAL holds now.
    private func committed(writer: OpaquePointer?, database: UnsafePointer<CChar>?, pages: Int32) {
        if pages >= Self.writerPages || (pages >= Self.besidePages && cannotOpen.load(ordering: .relaxed)) {
            queue.sync {}   // a checkpoint in flight ends first: this one then finds every page to copy
            sqlite3_wal_checkpoint_v2(writer, database, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
        } else if pages >= Self.besidePages, !asked.exchange(true, ordering: .acquiringAndReleasing) {
            queue.async { [weak self] in
                guard let self else { return }
                asked.store(false, ordering: .releasing)
                checkpointBeside()
            }
        }
    }

    /// One checkpoint on the checkpointing connection: what the WAL holds, without waiting for
    /// readers or the writer (PASSIVE). A failure leaves the pages for the next one.
    private func checkpointBeside() {
        connection.withLock { handle in
            if handle == nil && !cannotOpen.load(ordering: .relaxed) {
                var opened: OpaquePointer?
                var code = sqlite3_open_v2(path, &opened, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil)
                if code == SQLITE_OK {
                    // A read opens its WAL: a connection that has not read one checkpoints
                    // nothing. It may wait a moment for a lock (another program recovering the WAL).
                    sqlite3_busy_timeout(opened, 1_000)
                    code = sqlite3_exec(opened, "PRAGMA schema_version", nil, nil, nil)
                }
                if code == SQLITE_OK {
                    handle = opened
                } else {
                    sqlite3_close_v2(opened)
                    // For good only when it cannot be otherwise; a busy store is tried at the next ask.
                    let lasting = [SQLITE_CANTOPEN, SQLITE_READONLY, SQLITE_NOTADB, SQLITE_PERM, SQLITE_AUTH, SQLITE_CORRUPT]
                    if lasting.contains(code & 0xff) { cannotOpen.store(true, ordering: .relaxed) }
                }
            }
            guard let handle else { return }
            var walPages: Int32 = -1
            if sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, &walPages, nil) == SQLITE_OK && walPages >= 0 {
                besideCount.add(1, ordering: .relaxed)
            }
        }
    }
}
