import Foundation

/// Keeps the store's save numbers in commit order when several writer sessions commit at once
/// (an import's lanes, `ImportLanes`, beside the writer): a save takes the order inside its
/// transaction, after its last statement but the fence and the commit, then its number, and
/// gives the order back once its COMMIT (or ROLLBACK) has returned. So a number is published
/// only after every smaller one committed or rolled back, and a read that starts at a
/// published number sees every save up to it (the change log's promise). An `atomically`
/// block takes it when it begins and gives it back after its commit. Taken only inside a
/// transaction, after the session's own lock, never the other way round.
///
/// ```swift
/// var holding = false
/// defer { if holding { store.commitOrder.give() } }
/// try store.backend.write(interruptedBy: nil) { db in
///     try work(db)
///     store.commitOrder.take(); holding = true
///     number = store.notifications.nextSequence()
/// }
/// ```
final class CommitOrder: Sendable {
    private let lock = NSLock()

    /// Waits for the saves numbered before to end, and holds the order.
    func take() {
        lock.lock()
    }

    /// Gives the order back; on the thread that took it.
    func give() {
        lock.unlock()
    }
}
