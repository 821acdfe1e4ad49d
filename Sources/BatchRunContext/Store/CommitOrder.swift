import Foundation

/// Keeps the store's save numbers in commit order when several writer sessions commit at once
/// (an import's lanes, `ImportLanes`, beside the writer): a save takes the order inside its
/// transaction, after its own rows but before its checkpoint, then its number, and gives the
/// order back once its COMMIT (or ROLLBACK) has returned. So a number is published only after
/// every smaller one committed or rolled back, and a read that starts at a published number
/// sees every save up to it (the change log's promise); and the run's own records, which the
/// first checkpoint or `Store.writeRecords` writes (`RunRecording`), are written by one
/// transaction at a time. An `atomically` block and `writeRecords` take it when they begin.
/// Taken only inside a transaction, after the session's own lock, never the other way round,
/// and held while no statement waits on another session.
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
