import Foundation
import GRDB
import Synchronization

/// The coordinator: owns the SQLite file (WAL), the model, one serialized writer and
/// pooled snapshot readers.
///
/// Opening a store creates the file and its folder if missing, creates missing tables and
/// indexes, and verifies existing tables; nothing is created when any table lacks a column.
/// Verifying is a read: a store whose schema is complete opens, and can be read, while another
/// program holds its write lock.
///
/// ```swift
/// let store = try Store(path: "var/nightly.sqlite", model: model)
/// let main = MainContext(store: store)
/// let open = try main.count(FetchRequest(entity: "Session", where: "status = 'open'"))
/// ```
public final class Store: Sendable {
    public let path: String
    public let model: Model
    /// GRDB's pool: `read` gives a WAL snapshot, `write` the one serialized writer.
    var pool: DatabasePool { pools.withLock { $0.writable ?? $0.opened } }
    let notifications = SaveNotifications()
    let changeLog = ChangeLog()
    let generation = ChangeGeneration()
    /// Seconds a connection waits for a lock before failing with SQLITE_BUSY.
    let busyTimeout: Double

    /// The pool opened with the store, read-only when another program held the write lock
    /// then; `writable` is opened at the first write in that case.
    private struct Pools {
        let opened: DatabasePool
        var writable: DatabasePool?
    }
    private let pools: Mutex<Pools>

    public init(path: String, model: Model, busyTimeout: Double = 5) throws {
        self.path = path
        self.model = model
        self.busyTimeout = busyTimeout
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
            throw StoreError.cannotOpen(path: path, reason: StoreError.reason(for: error, busyTimeout: busyTimeout, path: path))
        } catch let error as DatabaseError {
            throw StoreError.cannotOpen(path: path, reason: StoreError.reason(for: error, busyTimeout: busyTimeout, path: path))
        } catch {
            throw StoreError.cannotOpen(path: path, reason: "\(error)")
        }
        pools = Mutex(Pools(opened: opened, writable: readOnly ? nil : opened))
        do {
            // Verifying is a read, which a WAL store never blocks; only a missing table or
            // index takes the write lock, so a fetch-only job runs beside a long outside write.
            let complete = try opened.read { db in
                try Self.verify(model: model, in: db)
                return try SchemaSQL.isComplete(model, in: db)
            }
            if !complete {
                try writer().write { db in
                    try Self.verify(model: model, in: db)
                    for statement in SchemaSQL.statements(for: model) {
                        try db.execute(sql: statement)
                    }
                }
            }
            if !readOnly { try Self.countCommits(of: opened, into: generation) }
        } catch let error as DatabaseError {
            throw StoreError.cannotOpen(path: path, reason: StoreError.reason(for: error, busyTimeout: busyTimeout, path: path))
        }
    }

    /// Opens the pool. GRDB writes to an empty WAL file as it opens a pool, which waits out
    /// busy_timeout while another program holds the write lock; a WAL store can still be read
    /// then, so it is opened read-only (`readOnly` true) and the writer comes at the first write.
    private static func open(path: String, busyTimeout: Double, readOnlyWhenLocked: Bool) throws -> (DatabasePool, readOnly: Bool) {
        var configuration = Configuration()
        configuration.busyMode = .timeout(busyTimeout)
        configuration.maximumReaderCount = max(2, ProcessInfo.processInfo.activeProcessorCount)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        do {
            return (try DatabasePool(path: path, configuration: configuration), false)
        } catch let busy as DatabaseError where readOnlyWhenLocked && busy.resultCode == .SQLITE_BUSY && isWAL(path) {
            configuration.readonly = true
            guard let pool = try? DatabasePool(path: path, configuration: configuration) else { throw busy }
            return (pool, true)
        }
    }

    /// The pool to write with. For a store opened read-only because another program held the
    /// write lock, a writable pool is opened now, waiting up to busy_timeout for that lock
    /// (a busy error, which a job's `retries` try again).
    func writer() throws -> DatabasePool {
        try pools.withLock { pools throws -> DatabasePool in
            if let writable = pools.writable { return writable }
            let (pool, _) = try Self.open(path: path, busyTimeout: busyTimeout, readOnlyWhenLocked: false)
            try Self.countCommits(of: pool, into: generation)
            pools.writable = pool
            return pool
        }
    }

    /// Counts the writer's commits in `generation` (see `ChangeGeneration`).
    private static func countCommits(of pool: DatabasePool, into generation: ChangeGeneration) throws {
        let counter = CommitCounter(generation)
        try pool.writeWithoutTransaction { db in
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

    /// Why a write failed, as a user can act on it.
    func describeWriteFailure(_ error: DatabaseError) -> String {
        StoreError.reason(for: error, busyTimeout: busyTimeout, path: path)
    }

    /// Checks that every existing table has every declared column; throws before anything is created.
    static func verify(model: Model, in db: Database) throws {
        var mismatches: [(entity: String, table: String, missing: [String])] = []
        for entity in model.entities where try db.tableExists(entity.tableName) {
            let existing = Set(try db.columns(in: entity.tableName).map { $0.name.lowercased() })
            let missing = entity.columnNames.filter { !existing.contains($0.lowercased()) }
            if !missing.isEmpty { mismatches.append((entity.name, entity.tableName, missing)) }
        }
        if !mismatches.isEmpty { throw StoreError.schemaMismatch(mismatches) }
    }

    // MARK: Saves

    /// Every save from now on, as it is committed (Core Data's did-save notification).
    ///
    /// ```swift
    /// for await save in store.didSaves() { print(save.savedBy, save.allIDs.count) }
    /// ```
    public func didSaves() -> AsyncStream<DidSave> {
        notifications.subscribe()
    }

    /// The number of the last save posted after its commit: a read started now sees at least it.
    var committedSequence: UInt64 { notifications.publishedSequence }

    /// True when someone listens to `didSaves()`, so savers can skip building their IDs.
    var hasSaveObservers: Bool { notifications.hasSubscribers }

    /// Numbers a save; called inside the write transaction so numbers follow commit order.
    func nextSaveSequence() -> UInt64 {
        notifications.nextSequence()
    }

    /// Hands a committed save to every `didSaves()` subscriber.
    func post(_ save: DidSave) {
        notifications.publish(save)
    }

    /// A number that grows with every commit by anyone; taken before a read.
    var changeGeneration: UInt64 { generation.current }

    /// True when nothing was committed to the store, by this process or any other program,
    /// since `changeGeneration` returned `since`. Called inside a write transaction.
    func isUnchanged(since: UInt64, in db: Database) throws -> Bool {
        try generation.isUnchanged(since: since, writer: db)
    }
}
