/// The failures of a statement that the layers above act on, whatever the database said:
/// a step is cancelled after `interrupted`, retries a batch after `busy` (when the job has
/// retries) and after `rolledBackForAnother` (always), reconnects and retries it after
/// `connectionLost` (within the store's `reconnect` window: `Reconnection`), and stops the run
/// with the backend's description after `diskFull` or `readOnly`.
///
/// ```swift
/// if StoreFailure(of: error) == .busy { retry() }
/// ```
package enum StoreFailure: Equatable {
    /// The statement was interrupted (cancellation).
    case interrupted
    /// Another connection held a lock for longer than the store waits.
    case busy
    /// The database rolled the transaction back so that another could go on (a deadlock, a
    /// serialization failure) and expects it to be run again.
    case rolledBackForAnother
    case diskFull
    case readOnly
    /// The connection to the server was lost (a restart, a failover, a terminated session, a
    /// network error) or could not be made again yet: the transaction in flight was rolled back.
    case connectionLost
}

extension StoreFailure {
    /// The kind of `error` when it is a database's error that is one of these.
    package init?(of error: any Error) {
        guard let error = error as? any StoreDatabaseError, let failure = error.storeFailure else { return nil }
        self = failure
    }
}

/// A database client's error as the layers above read it; each backend conforms its client's
/// error type (GRDB's `DatabaseError` on SQLite).
package protocol StoreDatabaseError: Error {
    /// The kind of failure, when it is one the layers above act on.
    var storeFailure: StoreFailure? { get }
    /// The database's own message, without the client's decoration.
    var databaseMessage: String { get }
}
