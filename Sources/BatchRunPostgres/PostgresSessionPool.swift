#if PostgreSQL
import PostgresNIO
import Synchronization

/// Sessions that closed stores of this process left open, for the next store of the same
/// database: a new session costs the server a process and its catalog reads, several
/// milliseconds, which a queue's runner (a store per item) paid on every item. A session is
/// reset when it is taken (`DISCARD ALL`: settings, temporary tables, listens, advisory locks);
/// one that fails the reset (closed by the server, left in a transaction) is closed and another
/// taken or made. At most `maximumIdle` sessions wait, over all databases: keeping one more
/// closes the one that waited longest, so a process that opens stores on many databases holds
/// no more than that many idle sessions of the server's `max_connections`.
///
/// ```swift
/// let (connection, pid) = try PostgresSessionPool.session(for: location)
/// // ... used by one store ...
/// PostgresSessionPool.keep(connection, pid: pid, for: location)   // left open for the next store
/// ```
package enum PostgresSessionPool {
    package static let maximumIdle = 8

    /// An idle session, the database it is for (`PostgresLocation.sessionKey`: also how it was
    /// connected) and its server process id.
    private struct Idle {
        let database: String
        let connection: PostgresConnection
        let pid: Int32
    }

    /// Oldest first.
    private static let idle = Mutex<[Idle]>([])

    /// An idle session of this database, reset, or a new one; with its server process id.
    package static func session(for location: PostgresLocation) throws -> (PostgresStoreConnection, pid: Int32) {
        while let kept = idle.withLock({ idle in
            idle.lastIndex { $0.database == location.sessionKey }.map { idle.remove(at: $0) }
        }) {
            // A session that fails the reset is closed as it is released.
            let session = PostgresStoreConnection(kept.connection)
            if (try? session.simple("DISCARD ALL")) != nil { return (session, kept.pid) }
        }
        let session = try PostgresBackend.connect(location)
        guard case .integer(let pid)? = try session.value("SELECT pg_backend_pid()") else { return (session, 0) }
        return (session, Int32(pid))
    }

    /// Keeps a session a store no longer uses (outside any transaction), closing the session
    /// that waited longest when `maximumIdle` already wait.
    package static func keep(_ session: PostgresStoreConnection, pid: Int32, for location: PostgresLocation) {
        let connection = session.connection
        guard !connection.isClosed else { return }
        session.keepOpen()
        let evicted = idle.withLock { idle -> Idle? in
            idle.append(Idle(database: location.sessionKey, connection: connection, pid: pid))
            return idle.count > maximumIdle ? idle.removeFirst() : nil
        }
        if let evicted { _ = try? evicted.connection.close().wait() }
    }
}
#endif
