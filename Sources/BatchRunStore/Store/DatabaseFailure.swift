/// A statement the database refused or failed, as `StoreError.database` carries it: the
/// database's own message, without its client library's types (no GRDB or PostgresNIO type
/// reaches a library user).
///
/// ```swift
/// do { _ = try context.fetch(FetchRequest(entity: "Session", where: "nme = 'x'")) }
/// catch StoreError.database(let failure) { print(failure.message) }   // no such column: nme
/// ```
public struct DatabaseFailure: Sendable, CustomStringConvertible {
    /// The database's own message (SQLite's or PostgreSQL's).
    public let message: String
    /// The kind the layers above act on (busy, interrupted, connection lost), when it is one.
    package let failure: StoreFailure?
    /// The client's full description (result code, statement), as reports show it.
    public let description: String
    /// The client's error, for the backend's own wording of it (`Store.describeFailure`).
    package let underlying: any Error

    /// `error` as a library user sees it: a database client's error becomes
    /// `StoreError.database`; any other error is left as it is.
    package static func publicError(_ error: any Error) -> any Error {
        guard !(error is StoreError), let database = error as? any StoreDatabaseError else { return error }
        return StoreError.database(DatabaseFailure(message: database.databaseMessage, failure: database.storeFailure,
                                                   description: "\(error)", underlying: error))
    }

    /// Runs `body`, a database client's error thrown as `StoreError.database`.
    package static func translating<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch { throw publicError(error) }
    }
}

/// A translated error still tells the layers above what kind of failure it was.
extension StoreError: StoreDatabaseError {
    package var storeFailure: StoreFailure? {
        if case .database(let failure) = self { return failure.failure }
        return nil
    }

    package var databaseMessage: String {
        if case .database(let failure) = self { return failure.message }
        return description
    }
}
