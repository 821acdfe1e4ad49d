import BatchRunStore
import BatchRunContext

/// The loop behind `delete` and `batch-update`: read a batch of rows in primary-key order in
/// the job's context, change it, save it (trying again from a fresh read when the step allows),
/// forget it, and go on after its last key until no row is left.
///
/// On a store whose writers lock only the rows they change (PostgreSQL), when nothing at all
/// was committed to the store since the step's previous save (by anyone, this job included),
/// a batch is read inside its save instead: the save's transaction reads the batch's keys and
/// runs the batch's set-based statement over them. That is the same batch, changed the same
/// way, as a read followed by a save with nothing committed between, without carrying the
/// rows to the context and back. On SQLite, whose one write lock every other program waits
/// for, reads stay outside the saves: back-to-back saves would starve other writers.
package enum ContextBatches {
    /// What a step does to each batch's rows.
    package enum Change {
        /// The read's assigned columns (`FetchRequest.assigning`) are the change.
        case update
        case delete
    }

    /// `statement` gives the batch's change as one set-based statement over the keys from the
    /// first row to the last, for a save that finds nothing committed since the read.
    package static func run(_ request: FetchRequest, in environment: StepEnvironment, context: isolated Context,
                    report: inout StepReport, change: Change, statement: (ObjectID, ObjectID) -> BulkChange) throws {
        var request = request
        request.limit = environment.batchSize
        if case .key(let key)? = environment.resumeAt {
            request.after = ObjectID(entity: environment.entity.name, key: key)
        }
        // The store's change generation right after this step's last save.
        var savedAtGeneration: UInt64?
        while true {
            if environment.isCancelled() { throw StepError.cancelled(report: report) }
            var retries = 0, failedSaves = 0, reconnects = 0
            defer {
                report.retries += retries
                report.batches.rolledBack += failedSaves
                report.reconnects += reconnects
            }
            // After a lost connection, a batch the checkpoint shows committed is not changed again:
            // the step goes on after the key the checkpoint holds.
            let before = request.after.map { StepPosition.key($0.key) }, rowsSoFar = report.rows
            let batch = try environment.withRetries(retried: { retries += 1 }, reconnected: { reconnects += 1 }, committed: {
                guard let batch = try environment.committedBatch(after: before, rowsSoFar: rowsSoFar),
                      case .key(let key) = batch.position else { return nil }
                var result = SaveResult()
                (result.inserted, result.updated, result.deleted) = (batch.rows.inserted, batch.rows.updated, batch.rows.deleted)
                return Batch(count: environment.batchSize, last: ObjectID(entity: environment.entity.name, key: key), result: result,
                             committedUnanswered: true)
            }) { () -> Batch in
                context.reset()
                if let generation = savedAtGeneration {
                    do {
                        if let batch = try readInSave(request, since: generation, in: environment, context: context, change: change,
                                                      statement: statement) {
                            return batch
                        }
                    } catch {
                        failedSaves += 1   // the save's transaction was rolled back
                        throw error
                    }
                }
                let objects = try context.fetch(request)
                guard let first = objects.first?.objectID, let last = objects.last?.objectID else { return Batch(count: 0) }
                if change == .delete {
                    for object in objects { context.delete(object) }
                }
                let bulk = statement(first, last)
                do {
                    let result = try environment.checkpoint.map { checkpoint in
                        try context.save(bulk: bulk, forgetting: true, checkpoint: checkpoint.at(.key(last.key)))
                    } ?? context.saveAndReset(bulk: bulk)
                    return Batch(count: objects.count, last: last, result: result)
                } catch {
                    failedSaves += 1   // the save's transaction was rolled back
                    throw error
                }
            }
            guard let last = batch.last, let result = batch.result else { break }
            if !context.store.hasStoreWideWriteLock { savedAtGeneration = context.store.changeGeneration }
            report.add(result, entity: environment.entity)
            if batch.committedUnanswered { report.batches.committed += 1 }
            environment.progress(report.rows)
            request.after = last
            if batch.count < environment.batchSize { break }
        }
    }

    private struct Batch {
        var count: Int
        var last: ObjectID?
        var result: SaveResult?
        /// Committed by a try whose answer was lost with the connection (found in the checkpoint).
        var committedUnanswered = false
    }

    /// The batch read and changed in one save, when the store is unchanged since `generation`;
    /// nil when it changed (nothing was written: read the batch as usual).
    private static func readInSave(_ request: FetchRequest, since generation: UInt64, in environment: StepEnvironment,
                                   context: isolated Context, change: Change,
                                   statement: (ObjectID, ObjectID) -> BulkChange) throws -> Batch? {
        let checkpoint = environment.checkpoint.map { checkpoint in { (last: ObjectID) in checkpoint.at(.key(last.key)) } }
        guard let saved = try context.saveReadingKeys(request, since: generation, deleting: change == .delete,
                                                      statement: statement, checkpoint: checkpoint) else { return nil }
        return Batch(count: saved.count, last: saved.last, result: saved.result)
    }
}
