@_spi(BatchRunPackage) import BatchRunStore
import Foundation
import Synchronization

/// An import's batches over several writer sessions at once (the store's import lanes, on
/// PostgreSQL), so that the server parses and inserts them on several cores. Each batch is one
/// transaction on its lane's session: its rows are written while the batches before it are
/// still being written, but its checkpoint, its number and its COMMIT wait until the batch
/// before it committed. So the committed batches are always the feed's first ones, and the
/// step's one checkpoint says where the feed goes on, as with one session: resume, a lost
/// COMMIT's answer, reconnects and the fence stay as they were. A batch that fails ends every
/// later one in flight without committing (`Outcome.aborted`), and the caller writes them again
/// in order on the context's own writer, then `resume()`s the lanes.
///
/// Batches go to lanes in turn; the caller keeps at most `count` in flight (it waits for the
/// oldest before starting another), so a lane never has two. Not inside `atomically`, and not
/// on SQLite, whose writer locks the whole file (`Context.makeImportLanes` gives nil then).
///
/// ```swift
/// if let lanes = context.makeImportLanes(2, for: entity, policy: .error, job: "load") {
///     let ticket = lanes.start(batch, columns: columns, checkpoint: nil, changes: context.newSaveChanges(), keys: [])
///     if case .committed(let save) = ticket.outcome() { report(context.saved(save)) }
/// }
/// ```
package final class ImportLanes: Sendable {
    private let lanes: [Lane]
    /// How many lanes: batches in flight at most.
    package var count: Int { lanes.count }
    private let turns = CommitTurns()
    private let store: Store
    /// The context's name: its saves are recorded under it.
    private let savedBy: String
    private let interrupter: Interrupter
    /// Batches started so far: the next one's index.
    private let started = Mutex(0)

    /// `numbers`: the lanes the store reserved for this import (`StoreBackend.reserveImportLanes`),
    /// given back when it ends (its last batch's block holds it until then).
    init(numbers: [Int], store: Store, entity: Entity, policy: MergePolicy, job: String, savedBy: String, interrupter: Interrupter) {
        self.store = store
        self.savedBy = savedBy
        self.interrupter = interrupter
        lanes = numbers.map { number in
            var importer = RowImporter(store: store, entity: entity, policy: policy, job: job)
            importer.advancesKeysInTurn = true
            return Lane(number: number, importer: importer)
        }
        // The first batch's lane has its session made (or taken from the pool and reset) while
        // that batch is read, not after it: a queue's small items each waited for it. The other
        // lanes open at their first batch, as a small feed may never reach them.
        if let first = lanes.first { first.queue.async { [store] in store.backend.openImportLane(first.number) } }
    }

    deinit {
        store.backend.releaseImportLanes(lanes.map(\.number))
    }

    /// A batch's end on its lane.
    package enum Outcome: Sendable {
        /// Committed, in its turn: what the context makes its `SaveResult` from (`Context.saved`).
        case committed(Save)
        /// Rolled back for an error of its own (as the one save path throws it).
        case failed(any Error)
        /// Rolled back unwritten because a batch before it failed.
        case aborted
    }

    /// A batch committed on a lane.
    package struct Save: Sendable {
        let changes: SaveChanges
        let sequence: UInt64
        let ruleEffects: DeleteRuleEnforcer.Effects
        let began: ContinuousClock.Instant
        /// The batch's conflicts, in feed order.
        package let records: ConflictRecords
    }

    /// Starts writing `batch` on the next lane, and returns at once; `changes` as the context
    /// makes a save's (`Context.newSaveChanges`). `checkpoint` runs in the batch's transaction,
    /// in its turn. `keys`: the keys its rows that leave the integer key out take, drawn in feed
    /// order by the caller (`BulkLoader.drawKeys`); a batch that needs others fails with
    /// `KeysNotGiven`, and is for the writer.
    package func start(_ batch: RowBatch, columns: [[Column]], checkpoint: SendableCheckpointWrite?, changes: SaveChanges,
                       keys: [Int64]) -> Ticket {
        let index = started.withLock { started in
            defer { started += 1 }
            return started
        }
        let lane = lanes[index % count]
        let ticket = Ticket()
        lane.queue.async { [self] in
            ticket.end(with: write(batch, columns: columns, checkpoint: checkpoint, changes: changes, keys: keys, index: index, on: lane))
        }
        return ticket
    }

    /// After a failure, once every batch in flight has ended and been written again on the
    /// writer: the next batch started is the next to commit.
    package func resume() {
        turns.restart(at: started.withLock { $0 })
    }

    /// Batch `index` in one transaction on `lane`'s session.
    private func write(_ batch: RowBatch, columns: [[Column]], checkpoint: SendableCheckpointWrite?, changes: SaveChanges,
                       keys: [Int64], index: Int, on lane: Lane) -> Outcome {
        var changes = changes
        var records = ConflictRecords()
        var sequence: UInt64?
        var ruleEffects = DeleteRuleEnforcer.Effects()
        var holding = false
        let began = ContinuousClock.now
        lane.importer.loader.useKeys(keys)
        do {
            try store.backend.write(lane: lane.number, interruptedBy: interrupter) { db in
                lane.importer.largestGivenKey = nil
                try lane.importer.write(batch, columns: columns, in: db, changes: &changes, records: &records)
                try turns.wait(for: index)
                // In turn: the key sequence moves past the keys given, and only forward.
                if let largest = lane.importer.largestGivenKey { try db.advanceAssignedKeys(of: lane.importer.entity, past: largest) }
                (sequence, ruleEffects) = try ContextCore.endSave(in: db, changes: &changes, checkpoint: checkpoint, store: store,
                                                                 savedBy: savedBy, takingOrder: true, holding: &holding)
            }
        } catch {
            if holding { store.commitOrder.give() }
            if let sequence { store.changeLog.forget(sequences: [sequence]) }
            turns.fail()
            return error is CommitTurns.Aborted ? .aborted : .failed(DatabaseFailure.publicError(error))
        }
        store.commitOrder.give()
        turns.committed(index)
        return .committed(Save(changes: changes, sequence: sequence!, ruleEffects: ruleEffects, began: began, records: records))
    }

    /// A batch's outcome, once its lane has ended it.
    package final class Ticket: Sendable {
        private let ended = Mutex<Outcome?>(nil)
        private let signal = DispatchSemaphore(value: 0)

        fileprivate func end(with outcome: Outcome) {
            ended.withLock { $0 = outcome }
            signal.signal()
        }

        /// Waits for the batch to commit or roll back.
        package func outcome() -> Outcome {
            signal.wait()
            signal.signal()   // a second call returns at once
            return ended.withLock { $0! }
        }
    }

    /// One lane: its session's number, its serial queue, its own importer (its bulk loader
    /// holds statements prepared on the lane's session).
    private final class Lane: @unchecked Sendable {
        // SAFETY: `importer` is used only by the blocks `ImportLanes.start` puts on `queue`, a
        // serial queue, so by one thread at a time.
        let number: Int
        let queue: DispatchQueue
        var importer: RowImporter

        init(number: Int, importer: RowImporter) {
            self.number = number
            self.importer = importer
            queue = DispatchQueue(label: "batchrun.import-lane.\(number)")
        }
    }
}
