/// What differs between the store's databases, behind `Store`: connections, snapshot reads,
/// the one serialized writer, interrupting a statement, "has anything been committed since",
/// opening, the schema's comparison and DDL with type mapping, and how a failure reads to a user. `SQLiteBackend`
/// (GRDB over the system SQLite) implements it; a PostgreSQL backend fits the same shape
/// (REPEATABLE READ read-only transactions, one writer connection per store, the cancel
/// request, `pg_current_xact_id`/`xmin` for "committed since").
///
/// The layers above see a transaction as a `StoreConnection`.
///
/// ```swift
/// let count = try store.backend.read(interruptedBy: nil) { connection in
///     try connection.value("SELECT count(*) FROM \"Session\"")
/// }
/// ```
package protocol StoreBackend: Sendable {
    /// Opens the database at `location` (an SQLite file is created with its folder when
    /// missing); `Store` then makes its tables hold the model (`SchemaMigration`).
    /// `fence`: a condition every write transaction must meet as it commits; a database that
    /// cannot fence writes throws when given one. `role`: the database role the statements run
    /// as, batchrun's own on its run-state tables excepted (`worker --item-role`); a database
    /// without roles throws when given one. `idleTimeout`: `StoreSpec.idleTimeout` (PostgreSQL;
    /// SQLite's transactions hold no lock another process waits for past its busy timeout).
    static func open(location: String, busyTimeout: Double, fence: WriteFence?, role: String?, idleTimeout: Double?) throws -> Self

    /// Where the store is, as messages and reports name it (a PostgreSQL URL without its password).
    var locationDescription: String { get }

    /// True where the database folds unquoted names to lowercase (PostgreSQL), so an entity's
    /// table is named in lowercase for expressions to reach it unquoted.
    static var foldsUnquotedNames: Bool { get }

    /// What connecting to `location` reaches and as whom: two locations with the same identity
    /// open the same database with the same credentials and connection security (an SQLite
    /// file's resolved path; a PostgreSQL server, port, database, user, `sslmode` and certificate
    /// files, as the environment completes them). A confined worker compares an item's store to
    /// the ones it allows with it; throws for a location that cannot be read.
    static func connectionIdentity(location: String) throws -> String

    /// A checker that prepares expressions as this database reads them, without opening a store.
    static func makeExpressionChecker(location: String, model: Model) throws -> any ExpressionChecking

    /// Runs `body` on a pooled reader, in a snapshot transaction (it sees one committed
    /// state); `interrupter` can stop its statement from another thread.
    func read<T>(interruptedBy interrupter: Interrupter?, _ body: (any StoreConnection) throws -> T) throws -> T

    /// `read` without blocking the caller's thread (the main actor's reads).
    func read<T: Sendable>(_ body: @escaping @Sendable (any StoreConnection) throws -> T) async throws -> T

    /// Runs `body` in one transaction on the store's one serialized writer; it commits when
    /// `body` returns and rolls back when it throws.
    func write<T>(interruptedBy interrupter: Interrupter?, _ body: (any StoreConnection) throws -> T) throws -> T

    /// `write` without blocking the caller's thread.
    func write<T: Sendable>(_ body: @escaping @Sendable (any StoreConnection) throws -> T) async throws -> T

    /// Up to `count` writer sessions besides `write`'s for one import to spread its batches
    /// over, each batch one transaction (`ImportLanes`): their lane numbers, this import's alone
    /// until `releaseImportLanes` (two imports at once never share a session: a batch keeps its
    /// session while it waits for the one before it to commit). None where a write locks the
    /// whole store (SQLite).
    func reserveImportLanes(_ count: Int) -> [Int]

    /// Lanes `reserveImportLanes` gave, free for another import (their sessions kept).
    func releaseImportLanes(_ lanes: [Int])

    /// Makes lane `lane`'s session now if it has none, so that an import's lanes open while its
    /// first batch is read; a failure is left for the lane's first `write` to meet.
    func openImportLane(_ lane: Int)

    /// `write` on import lane `lane` (a number `reserveImportLanes` gave): a writer session of
    /// its own, set up as `write`'s is, made at first use and again when the server closed it.
    func write<T>(lane: Int, interruptedBy interrupter: Interrupter?, _ body: (any StoreConnection) throws -> T) throws -> T

    /// A number that grows with every commit by anyone; taken before a read.
    var changeGeneration: UInt64 { get }

    /// True when a write transaction locks the whole store against every other writer
    /// (SQLite): batch steps then read outside their saves, leaving other programs the lock
    /// while they read. False where writers lock only the rows they change (PostgreSQL).
    var hasStoreWideWriteLock: Bool { get }

    /// True when nothing was committed to the store, by this process or any other, since
    /// `changeGeneration` returned `generation`. Called inside a write transaction.
    func isUnchanged(since generation: UInt64, in connection: any StoreConnection) throws -> Bool

    /// `changeGeneration` as it is inside a write transaction on `connection`, every commit
    /// before it counted (by this process or any other): the transaction's own commit will be
    /// the next number on a store with a store-wide write lock.
    func generation(in connection: any StoreConnection) throws -> UInt64

    /// Why an operation on the store failed, as a user can act on it (which lock and for how
    /// long, a full disk, a read-only file system).
    func describeFailure(_ error: any Error) -> String

    /// The bulk loader of one insert step into `entity`'s table.
    func makeBulkLoader(for entity: Entity) -> any BulkLoader

    /// Calls `handler` (on another thread) whenever a notification comes on `channel`
    /// (PostgreSQL's `LISTEN`); throws where the database has none (SQLite).
    func listen(channel: String, _ handler: @escaping @Sendable () -> Void) throws

    // MARK: Schema changes (JOBFILE.md section 13)

    /// Those of `tables` that exist, as the database keeps them, read on `connection`.
    func storedTables(named tables: [String], in connection: any StoreConnection) throws -> [String: StoredTable]

    /// True when a column stored with the database's type `storedType` holds a declared
    /// `type`'s values as declared (`varchar(20)` holds text; `text` does not hold real).
    func storedType(_ storedType: String, holds type: ColumnType) -> Bool

    /// The statement adding `column` to `entity`'s table, or why this database cannot add it
    /// to a table that has rows (`hasRows`).
    func addColumnStatement(_ column: Column, to entity: Entity, hasRows: Bool) -> Result<String, SchemaRefusal>

    /// The statements renaming a column and creating an index or a unique, as this database reads them.
    var tableDefinition: TableDefinition { get }

    /// Makes concurrent processes' schema changes one at a time; taken first in the schema
    /// change's write transaction (PostgreSQL's advisory lock; SQLite's write lock already does).
    func lockSchema(in connection: any StoreConnection) throws
}

/// Why a schema change cannot be made: what is wrong and what to do, one sentence each; the
/// entity and column it is about, when known.
package struct SchemaRefusal: BatchRunError {
    package let message: String
    package var entity: String?
    package var column: String?

    package var code: String { "store.schema-refused" }
    package var isInvalid: Bool { true }
    package var description: String { message }

    package init(message: String, entity: String? = nil, column: String? = nil) {
        self.message = message
        self.entity = entity
        self.column = column
    }
}
