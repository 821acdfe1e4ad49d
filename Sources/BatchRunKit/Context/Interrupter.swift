import GRDBSQLite
import Synchronization

/// Interrupts the statement a context is running, from any thread: how a cancel stops a long
/// aggregate or a huge UPDATE in flight rather than waiting for it.
///
/// The connection is registered only while the context's statement runs on it, under the same
/// lock the interrupt takes, so a connection handed back to the pool is never interrupted.
final class Interrupter: Sendable {
    // SAFETY of the bit pattern: the pointer is only turned back into a handle under the lock,
    // while the context's read or write closure still runs on that connection (it is cleared
    // under the lock before the closure returns), so the handle is valid whenever it is used.
    private let connection = Mutex<UInt?>(nil)
    private let requested = Mutex(false)

    /// Runs `body` with `handle` registered; a cancel requested before it starts interrupts at once.
    func running<T>(on handle: OpaquePointer?, _ body: () throws -> T) rethrows -> T {
        connection.withLock { $0 = handle.map { UInt(bitPattern: $0) } }
        if requested.withLock({ $0 }) { interrupt() }
        defer { connection.withLock { $0 = nil } }
        return try body()
    }

    /// Interrupts the running statement (if any) and every statement the context starts from now on.
    func interrupt() {
        requested.withLock { $0 = true }
        connection.withLock { bits in
            if let bits, let handle = OpaquePointer(bitPattern: bits) { sqlite3_interrupt(handle) }
        }
    }
}
