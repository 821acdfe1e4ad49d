import Synchronization

/// Interrupts the statement a context is running, from any thread: how a cancel stops a long
/// aggregate or a huge UPDATE in flight rather than waiting for it.
///
/// The backend registers how to stop its connection's statement only while the context's
/// work runs on that connection, under the same lock the interrupt takes, so a connection
/// handed back to the pool is never interrupted. Work that starts after an interrupt does not
/// run, and the backend checks `isRequested` between statements (SQLite: a progress handler).
///
/// ```swift
/// let interrupter = Interrupter()
/// // on another thread: interrupter.interrupt()
/// try store.backend.read(interruptedBy: interrupter) { db in try longAggregate(db) }
/// ```
package final class Interrupter: Sendable {
    /// How to stop each statement running now, by registration: one per transaction in flight
    /// (an import over several writer sessions runs several at once).
    private let actions = Mutex<(next: Int, stops: [Int: Callback<@Sendable () -> Void>])>((0, [:]))
    private let requested = Atomic<Bool>(false)

    /// True once `interrupt()` was called.
    package var isRequested: Bool { requested.load(ordering: .sequentiallyConsistent) }

    /// Runs `body` with `stop` registered, or throws `interrupted()` without running it when an
    /// interrupt came first. The check is made under the lock `interrupt()` takes to call
    /// `stop`, so an interrupt either finds `stop` registered or is seen here.
    package func running<T>(stoppedBy stop: @escaping @Sendable () -> Void, orThrow interrupted: () -> any Error,
                    _ body: () throws -> T) throws -> T {
        let (id, already) = actions.withLock { actions in
            actions.next += 1
            actions.stops[actions.next] = Callback(stop)
            return (actions.next, requested.load(ordering: .sequentiallyConsistent))
        }
        defer { _ = actions.withLock { $0.stops.removeValue(forKey: id) } }
        if already { throw interrupted() }
        return try body()
    }

    /// Interrupts the running statements (if any) and every statement the context starts from now on.
    package func interrupt() {
        requested.store(true, ordering: .sequentiallyConsistent)
        actions.withLock { actions in
            for stop in actions.stops.values { stop.function() }
        }
    }

    package init() {
    }
}
