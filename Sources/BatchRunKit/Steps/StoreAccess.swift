import GRDB

/// How a step reaches the store: through the pool (each batch its own transaction, reads from
/// a snapshot), or inside one transaction for an `atomic: true` job.
public protocol StoreAccess {
    /// Runs one batch of writes; the batch commits when `body` returns and rolls back when it throws.
    func write<T>(_ body: (Database) throws -> T) throws -> T
    /// Reads from a consistent snapshot.
    func read<T>(_ body: (Database) throws -> T) throws -> T
}

/// Each batch is one transaction on the store's serialized writer; reads use WAL snapshots.
public struct PoolAccess: StoreAccess {
    public let pool: DatabasePool

    public init(pool: DatabasePool) {
        self.pool = pool
    }

    public func write<T>(_ body: (Database) throws -> T) throws -> T {
        try pool.write(body)
    }

    public func read<T>(_ body: (Database) throws -> T) throws -> T {
        try pool.read(body)
    }
}

/// Everything inside one transaction that the caller commits or rolls back: `atomic: true`.
/// A batch is a savepoint, so a failed batch under a skipping policy leaves the others intact.
public struct TransactionAccess: StoreAccess {
    public let db: Database

    public init(db: Database) {
        self.db = db
    }

    public func write<T>(_ body: (Database) throws -> T) throws -> T {
        var result: T?
        try db.inSavepoint {
            result = try body(db)
            return .commit
        }
        return result!
    }

    public func read<T>(_ body: (Database) throws -> T) throws -> T {
        try body(db)
    }
}
