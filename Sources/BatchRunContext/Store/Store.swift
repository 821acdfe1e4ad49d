import BatchRunStore
import Foundation

/// The coordinator: the model, the database behind it (an SQLite file in WAL mode, or a
/// PostgreSQL database; one serialized writer and pooled snapshot readers either way), and the
/// saves posted after their commits.
///
/// Opening a store creates the file and its folder if missing, creates missing tables, and makes
/// existing tables hold the model (JOBFILE.md section 13): a declared column, index or unique a
/// table lacks is added, a column declared `NEW: TYPE was OLD` renamed, in one transaction, each
/// change recorded in `_batchrun_schema`; what would drop, retype or break something throws
/// `StoreError.schemaRefused` with nothing changed. Comparing is a read: a store whose schema is
/// complete opens, and can be read, while another program holds its write lock.
///
/// ```swift
/// let store = try Store(path: "var/nightly.sqlite", model: model)
/// let main = MainContext(store: store)
/// let open = try main.count(FetchRequest(entity: "Session", where: "status = 'open'"))
/// ```
public final class Store: Sendable {
    public let path: String
    public let model: Model
    /// The database behind the store; everything that differs between databases is there.
    package let backend: any StoreBackend
    /// Seconds a lost connection to the server is made again for (the spec's `reconnect`).
    package let reconnectWindow: Double
    package let notifications = SaveNotifications()
    let changeLog = ChangeLog()
    /// Save numbers in commit order across writer sessions.
    let commitOrder = CommitOrder()

    /// The store a `StoreSpec` names (a job file's `store:`): an SQLite file or a PostgreSQL
    /// database, chosen by the spec's kind. `fence`: a condition every write transaction must
    /// meet as it commits (a queue item's lease; PostgreSQL only).
    ///
    /// ```swift
    /// let store = try Store(StoreSpec(location: "postgresql://batch@db.internal/nightly"), model: model)
    /// ```
    public convenience init(_ spec: StoreSpec, model: Model) throws {
        try self.init(spec, model: model, fence: nil)
    }

    /// The store a `StoreSpec` names, every write transaction fenced by `fence` (a queue item's
    /// lease), its tables made to hold `model` (`migrate`) unless `migrating` is false.
    package init(_ spec: StoreSpec, model: Model, fence: WriteFence?, migrating: Bool = true) throws {
        // Relationships that name what the model lacks are refused before anything is opened.
        let problems = model.relationshipProblems
        guard problems.isEmpty else { throw StoreError.schemaRefused(problems) }
        // A confined SQLite file: its folder is walked and opened as `PathConfinement` says, the
        // file made in it by name when missing; SQLite opens it by its resolved path, which must
        // then still lead to that very file (else nothing more is done with it).
        let pinned = try spec.confinement.map { confinement throws(PathConfinementError) in
            let folder = try confinement.folder(holding: spec.path, creating: true)
            if !folder.contains(folder.name) { try? folder.openForWriting(folder.name, truncating: false).close() }
            return folder
        }
        let location = pinned?.filePath ?? spec.path
        let backend = try spec.backend().open(location: location, busyTimeout: spec.busyTimeout, fence: fence, role: spec.role,
                                                       idleTimeout: spec.idleTimeout)
        if let pinned {
            var info = stat()
            guard let identity = pinned.identity(of: pinned.name), stat(location, &info) == 0,
                  (UInt64(info.st_dev), UInt64(info.st_ino)) == identity else {
                throw PathConfinementError(path: spec.path, reason: "no longer leads to the file checked in \(pinned.path) "
                                           + "(a folder on its way was swapped as it was opened); the store was not used")
            }
        }
        path = backend.locationDescription
        self.model = model
        self.backend = backend
        reconnectWindow = spec.reconnect
        if migrating {
            do {
                try migrate(SchemaChangeOptions())
            } catch let refusals as SchemaRefusals {
                throw refusals.storeError
            }
        }
    }

    // MARK: Schema changes (JOBFILE.md section 13)

    /// Makes the tables hold the model: missing tables created, the schema changes `options`
    /// allows made in one transaction and recorded in `_batchrun_schema` (those are returned).
    /// Throws `SchemaRefusals` or `StoreError.schemaChangesRefused` with nothing changed.
    @discardableResult
    package func migrate(_ options: SchemaChangeOptions) throws -> [AppliedSchemaChange] {
        try asSchemaErrors { try SchemaMigration(model: model, backend: backend).migrate(options) }
    }

    /// The schema changes opening this store with `model` would make, making none (a preview).
    /// Throws `StoreError.schemaRefused` when they could not be made.
    ///
    /// ```swift
    /// for change in try store.schemaChanges(for: newModel) { print(change) }   // Person: added column score real default 1.5
    /// ```
    public func schemaChanges(for model: Model) throws -> [SchemaChange] {
        do {
            return try previewSchemaChanges(for: model)
        } catch let refusals as SchemaRefusals {
            throw refusals.storeError
        }
    }

    /// `schemaChanges(for:)`, its refusals thrown as `SchemaRefusals` (each with its entity and column).
    package func previewSchemaChanges(for model: Model) throws -> [SchemaChange] {
        try asSchemaErrors {
            try backend.read(interruptedBy: nil) { connection in
                try SchemaMigration(model: model, backend: backend).preview(in: connection)
            }
        }
    }

    /// `body`'s refusals and store errors as they are; any other failure (the database's) as
    /// `StoreError.cannotOpen`, described as users read it.
    private func asSchemaErrors<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as StoreError {
            throw error
        } catch let refusals as SchemaRefusals {
            throw refusals
        } catch {
            throw StoreError.cannotOpen(path: path, reason: backend.describeFailure(error))
        }
    }

    /// A store in one SQLite file (created with its folder when missing).
    public convenience init(path: String, model: Model, busyTimeout: Double = 5) throws {
        try self.init(StoreSpec(kind: .sqlite, path: path, busyTimeout: busyTimeout), model: model)
    }

    /// A store in a PostgreSQL database (`postgresql://USER@HOST:PORT/DB`; the password from
    /// `PGPASSWORD` or `~/.pgpass`, never from the URL). `path` is the URL.
    ///
    /// ```swift
    /// let store = try Store(postgres: "postgresql://batch@db.internal:5432/nightly", model: model)
    /// ```
    /// `busyTimeout`: how long a write waits for a lock another session holds.
    public convenience init(postgres url: String, model: Model, busyTimeout: Double = 5) throws {
        try self.init(StoreSpec(kind: .postgres, path: url, busyTimeout: busyTimeout), model: model, fence: nil)
    }

    // MARK: The store's own tables

    /// Reads the store's own records (`_batchrun_*`: the run ledger, a queue's table) in a
    /// snapshot. User rows are read through a context.
    package func readRecords<T>(_ body: (any StoreConnection) throws -> T) throws -> T {
        try backend.read(interruptedBy: nil, body)
    }

    /// Writes the store's own records in one transaction on the writer, holding the commit
    /// order (`CommitOrder`: the run's records are written by one transaction at a time). User
    /// rows are written through a context's one save path, never here.
    package func writeRecords<T>(_ body: (any StoreConnection) throws -> T) throws -> T {
        var holding = false
        defer { if holding { commitOrder.give() } }
        return try backend.write(interruptedBy: nil) { db in
            commitOrder.take()
            holding = true
            return try body(db)
        }
    }

    /// `writeRecords` without blocking the caller's thread.
    package func writeRecords<T: Sendable>(_ body: @escaping @Sendable (any StoreConnection) throws -> T) async throws -> T {
        try await offThread { try self.writeRecords(body) }
    }

    /// Calls `handler` whenever a notification comes on `channel` (PostgreSQL's `LISTEN`).
    package func listen(channel: String, _ handler: @escaping @Sendable () -> Void) throws {
        try backend.listen(channel: channel, handler)
    }

    /// Why an operation on the store failed, as a user can act on it.
    package func describeFailure(_ error: any Error) -> String {
        if case .database(let failure) = error as? StoreError { return backend.describeFailure(failure.underlying) }
        return backend.describeFailure(error)
    }

    // MARK: Saves

    /// Every save from now on, as it is committed (Core Data's did-save notification).
    ///
    /// ```swift
    /// for await save in store.didSaves() { print(save.savedBy, save.inserted.count) }
    /// ```
    public func didSaves() -> AsyncStream<DidSave> {
        notifications.subscribe()
    }

    /// The number of the last save posted after its commit: a read started now sees at least it.
    var committedSequence: UInt64 { notifications.publishedSequence }

    /// True when someone listens to `didSaves()`, so savers can skip building their IDs.
    var hasSaveObservers: Bool { notifications.hasSubscribers }

    /// Numbers a save; called inside the write transaction, holding `commitOrder`, so that
    /// numbers follow commit order.
    func nextSaveSequence() -> UInt64 {
        notifications.nextSequence()
    }

    /// Hands a committed save to every `didSaves()` subscriber.
    package func post(_ save: DidSave) {
        notifications.publish(save)
    }

    /// A number that grows with every commit by anyone; taken before a read.
    package var changeGeneration: UInt64 { backend.changeGeneration }

    /// True when a write locks the whole store against other writers (SQLite).
    package var hasStoreWideWriteLock: Bool { backend.hasStoreWideWriteLock }

    /// True when nothing was committed to the store, by this process or any other program,
    /// since `changeGeneration` returned `since`. Called inside a write transaction.
    package func isUnchanged(since: UInt64, in connection: any StoreConnection) throws -> Bool {
        try backend.isUnchanged(since: since, in: connection)
    }
}
