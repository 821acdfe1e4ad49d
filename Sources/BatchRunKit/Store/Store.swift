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
/// let main = MainContext(store: store)
/// let open = try main.count(FetchRequest(entity: "Session", where: "status = 'open'"))
/// ```
public final class Store: Sendable {
    public let path: String
    public let model: Model
    /// GRDB's pool: `read` gives a WAL snapshot, `write` the one serialized writer.
    let pool: DatabasePool
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
        } catch {
            throw StoreError.cannotOpen(path: path, reason: "\(error)")
        }
        try pool.write { db in
            try Self.verify(model: model, in: db)
            for statement in SchemaSQL.statements(for: model) {
                try db.execute(sql: statement)
            }
        }
        let counter = CommitCounter(generation)
        try pool.writeWithoutTransaction { db in
            db.add(transactionObserver: counter, extent: .databaseLifetime)
            _ = try generation.isUnchanged(since: 0, writer: db)   // the first data_version
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
