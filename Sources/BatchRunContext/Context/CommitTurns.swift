import Foundation

/// Whose turn it is to commit among an import's lanes (`ImportLanes`): batch after batch, in
/// feed order. A batch waits for its turn inside its transaction, after its rows are written.
///
/// ```swift
/// try turns.wait(for: 7)     // batch 6 committed (or throws Aborted: a batch before failed)
/// turns.committed(7)         // batch 8's turn
/// ```
final class CommitTurns: @unchecked Sendable {
    // SAFETY: `next` and `broken` are read and written only while `condition` is locked.
    private let condition = NSCondition()
    /// The batch whose turn it is.
    private var next = 0
    /// A batch failed: no later one commits until `restart`.
    private var broken = false

    /// The batch waiting for its turn was given up: one before it failed.
    struct Aborted: Error {}

    /// Waits until batch `index` is the next to commit; throws `Aborted` when one before it failed.
    func wait(for index: Int) throws {
        condition.lock()
        defer { condition.unlock() }
        while next != index && !broken { condition.wait() }
        if broken { throw Aborted() }
    }

    /// Batch `index` committed: the next one's turn.
    func committed(_ index: Int) {
        condition.lock()
        next = index + 1
        condition.broadcast()
        condition.unlock()
    }

    /// A batch failed: every later one in flight gives up.
    func fail() {
        condition.lock()
        broken = true
        condition.broadcast()
        condition.unlock()
    }

    /// Batches go on from `index`, the failure dealt with.
    func restart(at index: Int) {
        condition.lock()
        next = index
        broken = false
        condition.unlock()
    }
}
