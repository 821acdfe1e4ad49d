import Synchronization

/// Interrupts the statement a context is running, from any thread: how a cancel stops a long
/// aggregate or a huge UPDATE in flight rather than waiting for it.
///
/// The backend registers how to stop its connection's statement only while the context's
/// work runs on that connection, under the same lock the interrupt takes, so a connection
/// handed back to the pool is never interrupted.
///
/// ```swift
/// let interrupter = Interrupter()
/// // on another thread: interrupter.interrupt()
/// try store.backend.read(interruptedBy: interrupter) { db in try longAggregate(db) }
/// ```
final class Interrupter: Sendable {
    private let action = Mutex<(@Sendable () -> Void)?>(nil)
    private let requested = Mutex(false)

    /// Runs `body` with `stop` registered; a cancel requested before it starts stops it at once.
    func running<T>(stoppedBy stop: @escaping @Sendable () -> Void, _ body: () throws -> T) rethrows -> T {
        action.withLock { $0 = stop }
        if requested.withLock({ $0 }) { stop() }
        defer { action.withLock { $0 = nil } }
        return try body()
    }

    /// Interrupts the running statement (if any) and every statement the context starts from now on.
    func interrupt() {
        requested.withLock { $0 = true }
        action.withLock { $0?() }
    }
}
