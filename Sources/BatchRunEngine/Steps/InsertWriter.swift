import BatchRunStore
import BatchRunContext
import BatchRunFeeds
import Foundation

/// The writing side of an insert: takes the feed's batches from the pipe and hands each to
/// the context's one import path (`Context.importBatch`, or `Context.replaceAll` for a hot
/// swap), counting the step's rows from each committed save.
struct InsertWriter {
    package let environment: StepEnvironment
    package let place: FeedPlace
    /// The import path's state, kept from batch to batch.
    private var importer: RowImporter

    /// A feed in parts: its parts, and what of them is committed (nil for one feed or inline rows).
    private let parts: [FeedPart]?
    private var progress: PartsProgress?
    /// A feed's parts listed by this attempt, recorded with the first batch that commits.
    private var unrecordedParts: [FeedPart]?
    /// A feed in parts: rows its parts rejected after their last batch, counted with the next checkpoint.
    private var rejectedSinceBatch = 0

    /// `parts`: a feed in parts' list; `recording`: true when this attempt listed it (then the
    /// first batch that commits records it).
    package init(environment: StepEnvironment, context: Context, place: FeedPlace, parts: [FeedPart]? = nil, recording: Bool = false) {
        self.environment = environment
        self.place = place
        self.parts = parts
        unrecordedParts = recording ? parts : nil
        if let parts {
            if case .parts(let progress)? = environment.resumeAt {
                self.progress = progress
            } else {
                progress = PartsProgress(bytesTotal: parts.reduce(0) { $0 + $1.size })
            }
        }
        importer = context.makeImporter(for: environment.entity, policy: environment.mergePolicy, job: environment.job)
    }

    /// Each batch in its own transaction; counts join the report once the batch is committed.
    mutating func writeBatches(from pipe: BatchPipe, context: isolated Context, report: inout StepReport) throws {
        var importer = self.importer   // a local: `self` stays readable while a save writes through it
        defer { self.importer = importer }
        // Where the step's checkpoint stands: after the last batch committed.
        var committedAt = environment.resumeAt
        while true {
            if environment.isCancelled() { throw StepError.cancelled(report: report) }
            switch pipe.take() {
            case .end(let rejected):
                if parts == nil { report.rows.rejected = rejected }
                return
            case .partEnd(let index, let rejected):
                report.rows.rejected += rejected
                rejectedSinceBatch += rejected
                if let size = parts?[index].size { progress?.finish(part: index, size: size) }
            case .failure(let message, let rejected):
                report.rows.rejected = parts == nil ? rejected : report.rows.rejected + rejected
                // The reader stopped for the cancel (`FeedWatch`): the step was cancelled, not the feed.
                if environment.stoppedByCancel(failure: message) { throw StepError.cancelled(report: report) }
                throw StepError(message, report: report)
            case .batch(let batch, let layouts, let rejected, var position, let prefetched, let part):
                // A feed in parts: the batch moves its part on; the checkpoint holds every part's place.
                var moved = progress
                if let part, case .feed(let feed)? = position, moved != nil {
                    moved!.move(part: part.index, to: feed)
                    position = .parts(moved!)
                } else if part != nil {
                    position = nil
                }
                let newlyRejected = part == nil ? rejected - report.rows.rejected : rejected + rejectedSinceBatch
                // The checkpoint, in the batch's transaction: where the feed goes on, and the rows
                // rejected since the last one (with the first, a feed's parts).
                let checkpoint = position.flatMap { position in
                    environment.checkpoint?.at(position, rejected: newlyRejected, recording: unrecordedParts)
                }
                let place = part.map { FeedPlace(feedName: $0.name, inline: false) } ?? self.place
                report.rows.rejected = part == nil ? rejected : report.rows.rejected + rejected
                if let next = pipe.rowsWaiting() { importer.loader.expectNext(rows: next) }
                let columns = layouts.map(\.columns)
                // The batch's conflict records go on after the step's, in the step's own array,
                // moved over (not copied) for the batch: appending a batch's records to the step's
                // copied each one, a twentieth of a conflict-heavy import. A try that does not
                // commit takes its records back out.
                var records = ConflictRecords()
                swap(&records, &report.conflictRecords)
                let recordsBefore = records.count
                var retries = 0
                let result: SaveResult
                do {
                    // After a lost connection, a batch the checkpoint shows committed is not written again.
                    let rowsSoFar = report.rows
                    result = try environment.withRetries(retried: { retries += 1 }, reconnected: { report.reconnects += 1 }, committed: {
                        guard let position, let batch = try environment.committedBatch(after: committedAt, rowsSoFar: rowsSoFar),
                              batch.position == position else { return nil }
                        var result = SaveResult()
                        (result.inserted, result.updated, result.deleted) = (batch.rows.inserted, batch.rows.updated, batch.rows.deleted)
                        return result
                    }) {
                        records.removeRecords(from: recordsBefore)   // a try records from nothing
                        return try context.importBatch(batch, columns: columns, prefetched: prefetched, with: &importer,
                                                       records: &records, checkpoint: checkpoint)
                    }
                } catch {
                    records.removeRecords(from: recordsBefore)
                    swap(&records, &report.conflictRecords)
                    report.retries += retries
                    report.batches.rolledBack += 1 + retries
                    throw failure(error, report: report, place: place)
                }
                swap(&records, &report.conflictRecords)
                if checkpoint != nil {
                    unrecordedParts = nil
                    rejectedSinceBatch = 0
                }
                if part != nil { progress = moved }
                committedAt = position ?? committedAt
                // The rows as the save counted them, once.
                report.rows.inserted += result.inserted
                report.rows.updated += result.updated
                report.rows.deleted += result.deleted   // rows overwrite replaced for holding a row's unique value
                report.conflicts += report.conflictRecords.count - recordsBefore
                report.retries += retries
                report.batches.rolledBack += retries
                report.batches.committed += 1
                environment.progress(report.rows)
            }
        }
    }

    /// Hot swap: one transaction deletes every row and writes the whole feed; readers see the
    /// old rows or the new ones, never a mix. Nothing is counted unless it commits. Its
    /// checkpoint (done) is in the same transaction: a resumed run does not swap again.
    package mutating func hotSwap(from pipe: BatchPipe, context: isolated Context, report: inout StepReport) throws {
        var importer = self.importer   // a local: `self` stays readable while the save writes through it
        defer { self.importer = importer }
        var rejected = report.rows.rejected
        let checkpoint: CheckpointWrite? = environment.checkpoint.map { step in
            { db, changes in try step.at(.done, rejected: rejected)(db, changes) }
        }
        var records = ConflictRecords()
        swap(&records, &report.conflictRecords)
        let recordsBefore = records.count
        let result: SaveResult
        do {
            result = try context.replaceAll(with: &importer, records: &records, checkpoint: checkpoint) { write in
                loop: while true {
                    if environment.isCancelled() { throw StepError.cancelled(report: report) }
                    switch pipe.take() {
                    // A feed in parts counts its rejected rows per batch and part; one feed, in all so far.
                    case .end(let total):
                        if parts == nil { rejected = total }
                        break loop
                    case .partEnd(_, let count):
                        rejected += count
                    case .failure(let message, let total):
                        rejected = parts == nil ? total : rejected + total
                        if environment.stoppedByCancel(failure: message) { throw StepError.cancelled(report: report) }
                        throw StepError(message, report: report)
                    case .batch(let batch, let layouts, let total, _, _, let part):
                        rejected = part == nil ? total : rejected + total
                        try write(batch, layouts.map(\.columns))
                    }
                }
            }
        } catch {
            records.removeRecords(from: recordsBefore)
            swap(&records, &report.conflictRecords)
            report.rows.rejected = rejected
            report.batches.rolledBack += 1
            throw failure(error, report: report)
        }
        swap(&records, &report.conflictRecords)
        report.rows.rejected = rejected
        report.rows.deleted += result.deleted
        report.rows.inserted += result.inserted
        report.rows.updated += result.updated
        report.conflicts += report.conflictRecords.count - recordsBefore
        report.batches.committed += 1
        environment.progress(report.rows)
    }

    /// The step's error for a failed batch: a row's failure names its place in the feed, and a
    /// conflict under `error` keeps its record.
    private func failure(_ error: any Error, report: StepReport, place: FeedPlace? = nil) -> any Error {
        let place = place ?? self.place
        switch error {
        case ImportRowFailure.refused(let line, let message):
            return StepError("\(place(line)): \(message)", report: report)
        case ImportRowFailure.conflict(let line, let conflict):
            var report = report
            report.conflicts += 1
            report.conflictRecords.append(conflict.conflict.record(entity: environment.entity))
            return StepError("\(place(line)): \(conflict)", report: report, cause: conflict)
        case var stepError as StepError:
            stepError.report = report
            return stepError
        default:
            return error
        }
    }
}
