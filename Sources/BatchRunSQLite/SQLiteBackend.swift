import BatchRunStore
import Foundation
import GRDB
import GRDBSQLite
import Synchronization

/// The SQLite backend: one file in WAL mode through GRDB's `DatabasePool`, which gives
/// snapshot readers and one serialized writer.
///
/// Opening creates the file and its folder if missing; the store then makes its tables hold the
/// model (`SchemaMigration`). Comparing them is a read: a store whose schema is complete opens,
/// and can be read, while another program holds its write lock (the writer is opened at the
/// first write then).
///
/// ```swift
/// let backend = try SQLiteBackend(path: "var/nightly.sqlite", busyTimeout: 5)
/// try backend.write(interruptedBy: nil) { connection in try connection.execute("DELETE FROM \"Session\"") }
/// ```
package final class SQLiteBackend: StoreBackend {
    package let path: String
    /// Seconds a connection waits for a lock before failing with SQLITE_BUSY.
    package let busyTimeout: Double
    private let generation = ChangeGeneration()

    /// The pool opened with the store, read-only when another program held the write lock
    /// then; `writable` is opened at the first write in that case.
    private struct Pools {
        let opened: DatabasePool
        var writable: DatabasePool?
    }
    private let pools: Mutex<Pools>
    /// Checkpoints the writable pool's WAL beside its writer (installed as that pool opens).
    let checkpointer: WALCheckpointer

    /// GRDB's pool: `read` gives a WAL snapshot, `write` the one serialized writer.
    package var pool: DatabasePool { pools.withLock { $0.writable ?? $0.opened } }

    package static func open(location: String, busyTimeout: Double, fence: WriteFence?, role: String?, idleTimeout: Double?) throws -> SQLiteBackend {
        if role != nil {
            throw StoreError.cannotOpen(path: location, reason: "an SQLite store has no roles; --item-role applies to PostgreSQL stores")
        }
        if fence != nil {
            throw StoreError.cannotOpen(path: location, reason: "an SQLite store cannot fence its writes; fenced runs need a PostgreSQL store")
        }
        return try SQLiteBackend(path: location, busyTimeout: busyTimeout)
    }

    package static var foldsUnquotedNames: Bool { false }

    package var locationDescription: String { path }

    package static func connectionIdentity(location: String) throws -> String {
        URL(fileURLWithPath: location).standardizedFileURL.resolvingSymlinksInPath().path
    }

    package static func makeExpressionChecker(location: String, model: Model) throws -> any ExpressionChecking {
        try ExpressionChecker(model: model)
    }

    package init(path: String, busyTimeout: Double) throws {
        self.path = path
        self.busyTimeout = busyTimeout
        checkpointer = WALCheckpointer(path: path)
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw StoreError.cannotOpen(path: path, reason: error.localizedDescription)
        }
        let opened: DatabasePool, readOnly: Bool
        let sidecars = ["-wal", "-shm"].map { path + $0 }.filter { !FileManager.default.fileExists(atPath: $0) }
        do {
            (opened, readOnly) = try Self.open(path: path, busyTimeout: busyTimeout, readOnlyWhenLocked: true)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_NOTADB {
            // Leave the file as it was: no -wal or -shm beside it that this attempt made.
            for file in sidecars { try? FileManager.default.removeItem(atPath: file) }
            throw StoreError.cannotOpen(path: path, reason: Self.reason(for: error, busyTimeout: busyTimeout, path: path))
        } catch let error as DatabaseError {
            throw StoreError.cannotOpen(path: path, reason: Self.reason(for: error, busyTimeout: busyTimeout, path: path))
        } catch {
            throw StoreError.cannotOpen(path: path, reason: "\(error)")
        }
        pools = Mutex(Pools(opened: opened, writable: readOnly ? nil : opened))
        do {
            if !readOnly { try Self.prepareWriter(of: opened, generation: generation, checkpointer: checkpointer) }
        } catch let error as DatabaseError {
            throw StoreError.cannotOpen(path: path, reason: Self.reason(for: error, busyTimeout: busyTimeout, path: path))
        }
    }

    deinit {
        // The writer's WAL hook points at the checkpointer, which goes with this backend; the
        // pool may outlive it (`pool` hands it out). Waited for, after any write in flight, as
        // GRDB's own close waits: the store's file is closed once its `Store` is gone (not
        // asynchronously, which let a program that opened the file next find it locked).
        // Reentrant: the last reference may go on the writer's own queue.
        if let writable = pools.withLock({ $0.writable }) {
            writable.unsafeReentrantWrite { db in checkpointer.uninstall(from: db) }
        }
    }

    // MARK: StoreBackend

    package func read<T>(interruptedBy interrupter: Interrupter?, _ body: (any StoreConnection) throws -> T) throws -> T {
        try pool.read { db in try Self.running(body, on: db, interruptedBy: interrupter) }
    }

    package func read<T: Sendable>(_ body: @escaping @Sendable (any StoreConnection) throws -> T) async throws -> T {
        try await pool.read { db in try body(SQLiteConnection(db)) }
    }

    package func write<T>(interruptedBy interrupter: Interrupter?, _ body: (any StoreConnection) throws -> T) throws -> T {
        try writer().write { db in try Self.running(body, on: db, interruptedBy: interrupter) }
    }

    package func write<T: Sendable>(_ body: @escaping @Sendable (any StoreConnection) throws -> T) async throws -> T {
        try await writer().write { db in try body(SQLiteConnection(db)) }
    }

    package var changeGeneration: UInt64 { generation.current }

    package var hasStoreWideWriteLock: Bool { true }

    /// None: a write locks the whole database, so a second writer would only wait.
    package func reserveImportLanes(_ count: Int) -> [Int] { [] }

    package func releaseImportLanes(_ lanes: [Int]) {}

    package func openImportLane(_ lane: Int) {}

    package func write<T>(lane: Int, interruptedBy interrupter: Interrupter?, _ body: (any StoreConnection) throws -> T) throws -> T {
        try write(interruptedBy: interrupter, body)
    }

    package func isUnchanged(since generation: UInt64, in connection: any StoreConnection) throws -> Bool {
        // Every connection this backend hands out is a SQLiteConnection.
        try self.generation.isUnchanged(since: generation, writer: unsafeDowncast(connection, to: SQLiteConnection.self).db)
    }

    package func generation(in connection: any StoreConnection) throws -> UInt64 {
        // Every connection this backend hands out is a SQLiteConnection.
        try generation.now(writer: unsafeDowncast(connection, to: SQLiteConnection.self).db)
    }

    package func makeBulkLoader(for entity: Entity) -> any BulkLoader {
        SQLiteBulkLoader(entity: entity)
    }

    package func listen(channel: String, _ handler: @escaping @Sendable () -> Void) throws {
        throw StoreError.cannotOpen(path: path, reason: "SQLite has no notifications")
    }

    package func describeFailure(_ error: any Error) -> String {
        guard let error = error as? DatabaseError else { return "\(error)" }
        return Self.reason(for: error, busyTimeout: busyTimeout, path: path)
    }

    /// Runs `body` on `db` with `interrupter` able to stop it: `sqlite3_interrupt` stops the
    /// statement in flight, and a progress handler (every 1,000 virtual-machine steps) stops
    /// statements started after an interrupt that came between two statements, which SQLite's
    /// own flag forgets once no statement runs. Removed before the transaction commits.
    private static func running<T>(_ body: (any StoreConnection) throws -> T, on db: Database,
                                   interruptedBy interrupter: Interrupter?) throws -> T {
        guard let interrupter else { return try body(SQLiteConnection(db)) }
        let connection = db.sqliteConnection
        // `interrupter` outlives the handler: the caller holds it until this function returns.
        sqlite3_progress_handler(connection, 1_000, { context in
            Unmanaged<Interrupter>.fromOpaque(context!).takeUnretainedValue().isRequested ? 1 : 0
        }, Unmanaged.passUnretained(interrupter).toOpaque())
        defer { sqlite3_progress_handler(connection, 0, nil, nil) }
        // SAFETY of the bit pattern: the interrupter calls `stop` only while it is registered,
        // under its lock, and it is registered only while `body` runs on this connection (the
        // registration is undone under that lock before `running` returns and GRDB hands the
        // connection back to its pool), so the connection is open whenever it is interrupted.
        let handle = UInt(bitPattern: connection)
        return try interrupter.running(stoppedBy: { sqlite3_interrupt(OpaquePointer(bitPattern: handle)) },
                                       orThrow: { DatabaseError(resultCode: .SQLITE_INTERRUPT, message: "interrupted") }) {
            try body(SQLiteConnection(db))
        }
    }

    // MARK: Opening

    /// Opens the pool. GRDB writes to an empty WAL file as it opens a pool, which waits out
    /// busy_timeout while another program holds the write lock; a WAL store can still be read
    /// then, so it is opened read-only (`readOnly` true) and the writer comes at the first write.
    ///
    /// A store in a rollback journal is turned to WAL as it opens. When two processes do that
    /// at the same moment, SQLite answers one of them busy at once (waiting would deadlock
    /// them): that one tries again, within busy_timeout, and finds the store in WAL.
    /// For tests that count statements: every statement run on a store opened at one of these
    /// paths is handed to its closure (SQLite's trace). Read once, as the store opens.
    package static let statementTraces = Mutex<[String: @Sendable (String) -> Void]>([:])

    private static func open(path: String, busyTimeout: Double, readOnlyWhenLocked: Bool) throws -> (DatabasePool, readOnly: Bool) {
        var configuration = Configuration()
        configuration.busyMode = .timeout(busyTimeout)
        configuration.maximumReaderCount = max(2, ProcessInfo.processInfo.activeProcessorCount)
        let trace = statementTraces.withLock { $0[path] }
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            if let trace { db.trace { event in trace("\(event)") } }
        }
        let deadline = Date().addingTimeInterval(busyTimeout)
        var walRaces = 0
        while true {
            let wasWAL = isWAL(path)
            do {
                return (try DatabasePool(path: path, configuration: configuration), false)
            } catch let busy as DatabaseError where busy.resultCode == .SQLITE_BUSY && !wasWAL && Date() < deadline {
                Backoff.fixed(0.005...0.05).wait()
            } catch let gone as NSError where gone.domain == NSCocoaErrorDomain && gone.code == CocoaError.fileReadNoSuchFile.rawValue
                                                && walRaces < 5 {
                // GRDB sees the -wal file, then reads its size: another program's last connection
                // closing in between checkpoints and removes it (seen in CI, as a `sqlite3` shell
                // released its lock). Not the store's state: a new try does not meet it.
                walRaces += 1
                Backoff.fixed(0.005...0.05).wait()
            } catch let busy as DatabaseError where readOnlyWhenLocked && busy.resultCode == .SQLITE_BUSY && isWAL(path) {
                configuration.readonly = true
                guard let pool = try? DatabasePool(path: path, configuration: configuration) else { throw busy }
                return (pool, true)
            }
        }
    }

    /// The pool to write with. For a store opened read-only because another program held the
    /// write lock, a writable pool is opened now, waiting up to busy_timeout for that lock
    /// (a busy error, which a job's `retries` try again).
    package func writer() throws -> DatabasePool {
        try pools.withLock { pools throws -> DatabasePool in
            if let writable = pools.writable { return writable }
            let (pool, _) = try Self.open(path: path, busyTimeout: busyTimeout, readOnlyWhenLocked: false)
            try Self.prepareWriter(of: pool, generation: generation, checkpointer: checkpointer)
            // The program whose lock this waited for may have committed since a read: counted as
            // a change (the new writer's first data_version sets its baseline without counting).
            generation.didCommit()
            pools.writable = pool
            return pool
        }
    }

    /// Counts the writer's commits in `generation` (see `ChangeGeneration`), and hands its
    /// checkpoints to `checkpointer`.
    private static func prepareWriter(of pool: DatabasePool, generation: ChangeGeneration, checkpointer: WALCheckpointer) throws {
        let counter = CommitCounter(generation)
        try pool.writeWithoutTransaction { db in
            checkpointer.install(on: db)
            db.add(transactionObserver: counter, extent: .databaseLifetime)
            _ = try generation.isUnchanged(since: 0, writer: db)   // the first data_version
        }
    }

    /// True for an SQLite file whose header says WAL (bytes 18 and 19 are 2).
    static func isWAL(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path),
              let header = try? handle.read(upToCount: 20), header.count == 20 else { return false }
        try? handle.close()
        return header[18] == 2 && header[19] == 2
    }

    // MARK: Failures

    /// SQLite's error as a user can act on it: which lock and for how long, a full disk, a
    /// read-only file system, a file that is not a database.
    package static func reason(for error: DatabaseError, busyTimeout: Double, path: String) -> String {
        if [.SQLITE_READONLY, .SQLITE_CANTOPEN, .SQLITE_IOERR].contains(error.resultCode) && isOnReadOnlyFileSystem(path) {
            return "the store is on a read-only file system"
        }
        switch error.resultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return "another connection held the store's write lock for longer than busy_timeout (\(DurationFormat.jobFile.string(busyTimeout)))"
        case .SQLITE_FULL:
            return "the disk is full"
        case .SQLITE_READONLY:
            return "the store cannot be written (\(error.message ?? "read-only"))"
        case .SQLITE_NOTADB:
            return "the file is not an SQLite database"
        case .SQLITE_CANTOPEN:
            return "cannot open the file (\(error.message ?? "unable to open database file"))"
        default:
            return error.message ?? "\(error)"
        }
    }

    /// True when the store's folder is on a read-only file system (SQLite then says only that it
    /// cannot open or write the file).
    static func isOnReadOnlyFileSystem(_ path: String) -> Bool {
        var info = statvfs()
        let folder = (path as NSString).deletingLastPathComponent
        guard statvfs(folder.isEmpty ? "." : folder, &info) == 0 else { return false }
        return info.f_flag & UInt(ST_RDONLY) != 0
    }
}
