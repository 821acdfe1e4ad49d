import Foundation
import GRDB

/// The coordinator: owns the SQLite file (WAL), the model, one serialized writer and
/// pooled snapshot readers.
///
/// Opening a store creates the file and its folder if missing, creates missing tables and
/// indexes, and verifies existing tables; nothing is created when any table lacks a column.
///
/// ```swift
/// let store = try Store(path: "var/nightly.sqlite", model: model)
/// let count = try store.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM Session") }
/// ```
public final class Store: Sendable {
    public let path: String
    public let model: Model
    /// GRDB's pool: `read` gives a WAL snapshot, `write` the one serialized writer.
    public let pool: DatabasePool
    let notifications = SaveNotifications()
    let changeLog = ChangeLog()
    let generation = ChangeGeneration()

    public init(path: String, model: Model, busyTimeout: Double = 5) throws {
        self.path = path
        self.model = model
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw StoreError.cannotOpen(path: path, reason: error.localizedDescription)
        }
        var configuration = Configuration()
        configuration.busyMode = .timeout(busyTimeout)
        configuration.maximumReaderCount = max(2, ProcessInfo.processInfo.activeProcessorCount)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        do {
            pool = try DatabasePool(path: path, configuration: configuration)
        } catch let error as DatabaseError {
            throw StoreError.cannotOpen(path: path, reason: StoreError.reason(for: error, busyTimeout: busyTimeout))
        } catch {
            throw StoreError.cannotOpen(path: path, reason: "\(error)")
        }
        do {
            // Verifying is a read, which a WAL store never blocks; only a missing table or
            // index takes the write lock, so a fetch-only job runs beside a long outside write.
            let complete = try pool.read { db in
                try Self.verify(model: model, in: db)
                return try SchemaSQL.isComplete(model, in: db)
            }
            if !complete {
                try pool.write { db in
                    try Self.verify(model: model, in: db)
                    for statement in SchemaSQL.statements(for: model) {
                        try db.execute(sql: statement)
                    }
                }
            }
            let counter = CommitCounter(generation)
            try pool.writeWithoutTransaction { db in
                db.add(transactionObserver: counter, extent: .databaseLifetime)
                _ = try generation.isUnchanged(since: 0, writer: db)   // the first data_version
            }
        } catch let error as DatabaseError {
            throw StoreError.cannotOpen(path: path, reason: StoreError.reason(for: error, busyTimeout: busyTimeout))
        }
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

    /// The number of the last committed save; a read started now sees at least that save.
    public var saveSequence: UInt64 { notifications.currentSequence }

    /// The number of the last save posted to `didSaves()` subscribers.
    public var postedSaveSequence: UInt64 { notifications.publishedSequence }

    /// True when someone listens to `didSaves()`, so savers can skip building their IDs.
    public var hasSaveObservers: Bool { notifications.hasSubscribers }

    /// Numbers a save; call inside the write transaction so numbers follow commit order.
    public func nextSaveSequence() -> UInt64 {
        notifications.nextSequence()
    }

    /// Records a committed save (for `changed_by`) and hands it to every subscriber.
    public func didCommit(_ save: DidSave) {
        changeLog.record(save)
        notifications.publish(save)
    }

    /// A number that grows with every commit by anyone; take it before a read.
    public var changeGeneration: UInt64 { generation.current }

    /// True when nothing was committed to the store, by this process or any other program,
    /// since `changeGeneration` returned `since`. Call inside a write transaction.
    public func isUnchanged(since: UInt64, in db: Database) throws -> Bool {
        try generation.isUnchanged(since: since, writer: db)
    }

    /// Records keys a committed save changed without a `DidSave` (nobody listens): for
    /// naming who changed a row in a later conflict.
    func recordChanges(sequence: UInt64, savedBy job: String, entity: String, keys: KeySet) {
        changeLog.record(sequence: sequence, job: job, entity: entity, keys: keys)
    }

    /// The job of this run that last changed the row in a save after `sequence`, if any.
    public func lastWriter(of id: ObjectID, after sequence: UInt64) -> String? {
        changeLog.lastWriter(of: id, after: sequence)
    }
}
