import GRDB
import Synchronization

/// A number that grows with every commit to the store, by this process or any other program,
/// so a save can tell cheaply that nothing at all changed since its read.
///
/// Commits through the store's writer are counted by a commit hook. Commits by other
/// connections (another batchrun, the sqlite3 shell) change the writer connection's
/// `PRAGMA data_version`, which is compared at each check; a change counts as a commit.
/// The check errs only on the safe side: it may report a change that happened before the read.
final class ChangeGeneration: Sendable {
    private struct State {
        var value: UInt64 = 0
        var dataVersion: Int64?
    }

    private let state = Mutex(State())

    /// The generation now; take it before a read starts.
    package var current: UInt64 { state.withLock { $0.value } }

    /// Counts a commit through the store's writer.
    package func didCommit() {
        state.withLock { $0.value += 1 }
    }

    /// True when nothing committed since `generation`. Call inside a write transaction on the
    /// store's writer, so nothing else commits while the answer is used.
    package func isUnchanged(since generation: UInt64, writer db: Database) throws -> Bool {
        try now(writer: db) == generation
    }

    /// The generation with every commit so far counted. Call inside a write transaction on the
    /// store's writer: the transaction's own commit will be the next number.
    package func now(writer db: Database) throws -> UInt64 {
        let dataVersion = try Int64.fetchOne(db, sql: "PRAGMA data_version") ?? 0
        return state.withLock { state in
            if state.dataVersion != dataVersion {
                if state.dataVersion != nil { state.value += 1 }   // another connection committed
                state.dataVersion = dataVersion
            }
            return state.value
        }
    }
}

/// Tells `ChangeGeneration` about every commit of the writer connection.
final class CommitCounter: TransactionObserver {
    package let generation: ChangeGeneration

    package init(_ generation: ChangeGeneration) {
        self.generation = generation
    }

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { false }
    func databaseDidChange(with event: DatabaseEvent) {}
    func databaseDidCommit(_ db: Database) { generation.didCommit() }
    func databaseDidRollback(_ db: Database) {}
}
