@_spi(BatchRunPackage) import BatchRunStore
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
    /// Where the step's checkpoint stands after the last batch taken (once every batch taken commits).
    private var takenAt: StepPosition?

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
        takenAt = environment.resumeAt
    }

    /// Each batch in its own transaction; counts join the report once the batch is committed.
    /// With `writers` of 2 or more on a store with import lanes (PostgreSQL), that many batches
    /// are written at once, each on a session of its own, and committed in feed order
    /// (`ImportLanes`); a batch a lane could not commit is written again here, on the writer,
    /// and so is every later batch in flight (the lanes gave them up unwritten; their rollback
    /// is not counted as the batch's).
    mutating func writeBatches(from pipe: BatchPipe, context: isolated Context, writers: Int, report: inout StepReport) throws {
        var importer = self.importer   // a local: `self` stays readable while a save writes through it
        defer { self.importer = importer }
        var lanes = writers > 1
            ? context.makeImportLanes(writers, for: environment.entity, policy: environment.mergePolicy, job: environment.job) : nil
        // Times batches in flight went from the lanes to the writer (a lock, perhaps one a later
        // batch in flight held; keys they were not given): after `writerFallbacksAllowed`, the
        // step goes on on the writer alone (a feed whose keys repeat across neighbouring batches).
        // Counted once however many of the batches in flight went: after a kill, a `--resume`
        // meets every lane's first batch locked by the killed run's sessions (the server ends
        // them only once their statement does), and that once is no reason to give up the lanes.
        var writerFallbacks = 0
        // Batches started on the lanes, oldest first.
        var inFlight: [(batch: TakenBatch, ticket: ImportLanes.Ticket)] = []
        // Every batch in flight ended and counted (or written again on the writer).
        func settle(all: Bool) throws {
            guard let running = lanes, !inFlight.isEmpty else { return }
            let oldest = inFlight[0]
            if !all, case .committed(let save) = oldest.ticket.outcome() {
                inFlight.removeFirst()
                return counted(context.saved(save), records: save.records, of: oldest.batch, retries: 0, report: &report)
            }
            // A failure (or the end): every batch in flight ends first, so none holds a lock the
            // writer then waits for; then in feed order, each committed one counted, the others
            // written again on the writer (unless the step was cancelled).
            let ended = inFlight.map { ($0.batch, $0.ticket.outcome()) }
            inFlight.removeAll()
            var fellBack = false
            for (batch, outcome) in ended {
                switch outcome {
                case .committed(let save):
                    counted(context.saved(save), records: save.records, of: batch, retries: 0, report: &report)
                case .failed(let error) where Self.isForTheWriter(error):
                    // Its lock may have been a later batch's, which waited for this one's commit
                    // meanwhile (lanes wait for a lock briefly, `StoreBackend.reserveImportLanes`), or it
                    // needed keys the server would have drawn out of feed order: the writer tries
                    // it as if untried, with the store's busy_timeout and the retries.
                    if environment.isCancelled() { throw StepError.cancelled(report: report) }
                    fellBack = true
                    try writeOnWriter(batch, context: context, importer: &importer, report: &report)
                case .failed(let error):
                    if environment.isCancelled() { throw StepError.cancelled(report: report) }
                    try writeOnWriter(batch, failedWith: error, context: context, importer: &importer, report: &report)
                case .aborted:
                    if environment.isCancelled() { throw StepError.cancelled(report: report) }
                    try writeOnWriter(batch, context: context, importer: &importer, report: &report)
                }
            }
            running.resume()
            if fellBack { writerFallbacks += 1 }
            if writerFallbacks >= Self.writerFallbacksAllowed { lanes = nil }
        }
        while true {
            if environment.isCancelled() {
                try settle(all: true)
                throw StepError.cancelled(report: report)
            }
            switch pipe.take() {
            case .end(let rejected):
                try settle(all: true)
                if parts == nil { report.rows.rejected = rejected }
                return
            case .partEnd(let index, let rejected):
                report.rows.rejected += rejected
                rejectedSinceBatch += rejected
                if let size = parts?[index].size { progress?.finish(part: index, size: size) }
            case .failure(let message, let rejected):
                try settle(all: true)
                report.rows.rejected = parts == nil ? rejected : report.rows.rejected + rejected
                // The reader stopped for the cancel (`FeedWatch`): the step was cancelled, not the feed.
                if environment.stoppedByCancel(failure: message) { throw StepError.cancelled(report: report) }
                throw StepError(message, report: report)
            case .batch(let batch, let layouts, let rejected, let position, let prefetched, let part):
                let taken = take(batch, layouts: layouts, rejected: rejected, position: position, prefetched: prefetched, part: part,
                                 report: &report)
                if let running = lanes, inFlight.count == running.count { try settle(all: false) }
                // (`settle` may have ended the lanes.) Keys the batch's rows leave out are drawn
                // now, so that they rise in feed order whichever lane writes first; a batch that
                // gives some keys and leaves others to the server goes to the writer, in order.
                if lanes != nil, let next = pipe.rowsWaiting() { importer.loader.expectNext(rows: next) }
                guard let lanes, let keys = try? keysDrawn(for: taken, with: importer) else {
                    try settle(all: true)
                    if let next = pipe.rowsWaiting() { importer.loader.expectNext(rows: next) }
                    try writeOnWriter(taken, context: context, importer: &importer, report: &report)
                    continue
                }
                inFlight.append((taken, lanes.start(batch, columns: taken.columns, checkpoint: taken.checkpoint,
                                                    changes: context.newSaveChanges(), keys: keys)))
            }
        }
    }

    /// Times lane batches went to the writer (a lock, keys) before a step writes on the writer alone.
    static let writerFallbacksAllowed = 3

    /// True for a lock waited on too long, a deadlock the server broke, or keys a lane's batch
    /// was not given (`KeysNotGiven`).
    private static func isForTheWriter(_ error: any Error) -> Bool {
        let failure = StoreFailure(of: error)
        return failure == .busy || failure == .rolledBackForAnother || error is KeysNotGiven
    }

    /// The keys `taken`'s rows take from the entity's integer key sequence, drawn now (none
    /// when the entity's key is not one, or every row gives it); throws `KeysNotGiven` when
    /// some rows give the key and others leave it to the server.
    private func keysDrawn(for taken: TakenBatch, with importer: RowImporter) throws -> [Int64] {
        let entity = environment.entity
        guard entity.hasRowidKey else { return [] }
        let key = entity.primaryKey[0]
        let positions = taken.columns.map { columns in columns.firstIndex { $0.name == key } }
        let batch = taken.batch
        var leftOut = 0, given = 0
        for row in 0..<batch.count {
            guard let position = positions[batch.layouts[row]] else {
                leftOut += 1
                continue
            }
            if batch.cells[batch.cells(of: row).lowerBound + position].kind != .integer { throw KeysNotGiven() }
            given += 1
        }
        if leftOut > 0 && given > 0 { throw KeysNotGiven() }
        return leftOut == 0 ? [] : try importer.loader.drawKeys(leftOut)
    }

    /// A batch taken from the feed, with what its commit needs: where the checkpoint then stands.
    private struct TakenBatch {
        let batch: RowBatch
        let columns: [[Column]]
        let prefetched: PrefetchedRows?
        /// The position after the batch (nil: the step keeps no checkpoint), and before it.
        let position: StepPosition?
        let before: StepPosition?
        let checkpoint: SendableCheckpointWrite?
        /// The feed's name and line, for a row's failure.
        let place: FeedPlace
    }

    /// Takes the next batch: its checkpoint (where the feed goes on, the rows rejected since
    /// the last one, with the first a feed's parts) and the step's rejected rows so far. The
    /// batch is counted once it commits; a batch that does not ends the step.
    private mutating func take(_ batch: RowBatch, layouts: [FeedBatcher.Layout], rejected: Int, position: StepPosition?,
                               prefetched: PrefetchedRows?, part: BatchPipe.PartMark?, report: inout StepReport) -> TakenBatch {
        var position = position
        // A feed in parts: the batch moves its part on; the checkpoint holds every part's place.
        if let part, case .feed(let feed)? = position, progress != nil {
            progress!.move(part: part.index, to: feed)
            position = .parts(progress!)
        } else if part != nil {
            position = nil
        }
        let newlyRejected = part == nil ? rejected - report.rows.rejected : rejected + rejectedSinceBatch
        let checkpoint = position.flatMap { position in
            environment.checkpoint?.at(position, rejected: newlyRejected, recording: unrecordedParts)
        }
        if checkpoint != nil {
            unrecordedParts = nil
            rejectedSinceBatch = 0
        }
        report.rows.rejected = part == nil ? rejected : report.rows.rejected + rejected
        defer { if let position { takenAt = position } }
        return TakenBatch(batch: batch, columns: layouts.map(\.columns), prefetched: prefetched, position: position, before: takenAt,
                          checkpoint: checkpoint, place: part.map { FeedPlace(feedName: $0.name, inline: false) } ?? place)
    }

    /// Writes `taken` in its own transaction on the context's writer, with the step's retries;
    /// `failedWith`: how its try on a lane ended, met again as this call's first try (so a lost
    /// connection first asks whether the batch committed after all).
    private func writeOnWriter(_ taken: TakenBatch, failedWith laneError: (any Error)? = nil, context: isolated Context,
                               importer: inout RowImporter, report: inout StepReport) throws {
        // The batch's conflict records go on after the step's, in the step's own array,
        // moved over (not copied) for the batch: appending a batch's records to the step's
        // copied each one, a twentieth of a conflict-heavy import. A try that does not
        // commit takes its records back out.
        var records = ConflictRecords()
        swap(&records, &report.conflictRecords)
        let recordsBefore = records.count
        var retries = 0   // a lane's failed try is the first
        var laneError = laneError
        let result: SaveResult
        do {
            // After a lost connection, a batch the checkpoint shows committed is not written again.
            let rowsSoFar = report.rows
            result = try environment.withRetries(retried: { retries += 1 }, reconnected: { report.reconnects += 1 }, committed: {
                guard let position = taken.position, let batch = try environment.committedBatch(after: taken.before, rowsSoFar: rowsSoFar),
                      batch.position == position else { return nil }
                var result = SaveResult()
                (result.inserted, result.updated, result.deleted) = (batch.rows.inserted, batch.rows.updated, batch.rows.deleted)
                return result
            }) {
                if let error = laneError {
                    laneError = nil
                    throw error
                }
                records.removeRecords(from: recordsBefore)   // a try records from nothing
                return try context.importBatch(taken.batch, columns: taken.columns, prefetched: taken.prefetched, with: &importer,
                                               records: &records, checkpoint: taken.checkpoint)
            }
        } catch {
            records.removeRecords(from: recordsBefore)
            swap(&records, &report.conflictRecords)
            report.retries += retries
            report.batches.rolledBack += 1 + retries
            throw failure(error, report: report, place: taken.place)
        }
        swap(&records, &report.conflictRecords)
        counted(result, records: nil, of: taken, retries: retries, recordsBefore: recordsBefore, report: &report)
    }

    /// A committed batch's counts join the report, once: its rows as the save counted them,
    /// its conflicts (`records`, when not already in the report's from `recordsBefore` on).
    private func counted(_ result: SaveResult, records: ConflictRecords?, of taken: TakenBatch, retries: Int,
                         recordsBefore: Int? = nil, report: inout StepReport) {
        let before = recordsBefore ?? report.conflictRecords.count
        if let records { report.conflictRecords.append(contentsOf: records) }
        report.rows.inserted += result.inserted
        report.rows.updated += result.updated
        report.rows.deleted += result.deleted   // rows overwrite replaced for holding a row's unique value
        report.conflicts += report.conflictRecords.count - before
        report.retries += retries
        report.batches.rolledBack += retries
        report.batches.committed += 1
        environment.progress(report.rows)
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
