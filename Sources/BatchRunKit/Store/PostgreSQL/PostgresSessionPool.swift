import PostgresNIO
import Synchronization

/// Sessions that closed stores of this process left open, for the next store of the same
/// database: a new session costs the server a process and its catalog reads, several
/// milliseconds, which a queue's runner (a store per item) paid on every item. A session is
/// reset when it is taken (`DISCARD ALL`: settings, temporary tables, listens, advisory locks);
/// one that fails the reset (closed by the server, left in a transaction) is closed and another
/// taken or made. At most `maximumIdle` sessions wait per database.
///
/// ```swift
/// let (connection, pid) = try PostgresSessionPool.session(for: location)
/// // ... used by one store ...
/// PostgresSessionPool.keep(connection, pid: pid, for: location)
/// ```
enum PostgresSessionPool {
    static let maximumIdle = 4

    private static let idle = Mutex<[String: [(connection: PostgresConnection, pid: Int32)]]>([:])

    /// An idle session of this database, reset, or a new one; with its server process id.
    static func session(for location: PostgresLocation) throws -> (PostgresStoreConnection, pid: Int32) {
        while let (connection, pid) = idle.withLock({ $0[location.description]?.popLast() }) {
            let session = PostgresStoreConnection(connection)
            if (try? session.simple("DISCARD ALL")) != nil { return (session, pid) }
            _ = try? connection.close().wait()
        }
        let session = try PostgresBackend.connect(location)
        guard case .integer(let pid)? = try session.value("SELECT pg_backend_pid()") else { return (session, 0) }
        return (session, Int32(pid))
    }

    /// Keeps a session a store no longer uses (outside any transaction); closes it when enough wait.
    static func keep(_ connection: PostgresConnection, pid: Int32, for location: PostgresLocation) {
        guard !connection.isClosed else { return }
        let kept = idle.withLock { idle -> Bool in
            guard idle[location.description, default: []].count < maximumIdle else { return false }
            idle[location.description, default: []].append((connection, pid))
            return true
        }
        if !kept { _ = try? connection.close().wait() }
    }
}
