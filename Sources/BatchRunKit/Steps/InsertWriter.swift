import Foundation

/// The writing side of an insert.
struct InsertWriter {
    let environment: StepEnvironment
    let store: Store
    let place: FeedPlace
    /// The step's bulk loader, kept from batch to batch.
    let loader: any BulkLoader
    /// This step's last commits: each one's change generation and the range of the keys it
    /// wrote (nil: unknown), for telling whether rows read ahead are still current.
    private var ownCommits: [(generation: UInt64, keys: ClosedRange<Int64>?)] = []

    init(environment: StepEnvironment, store: Store, place: FeedPlace) {
        self.environment = environment
        self.store = store
        self.place = place
        loader = store.backend.makeBulkLoader(for: environment.entity)
    }

    /// Each batch in its own transaction; counts join the report once the batch is committed.
    mutating func writeBatches(from pipe: BatchPipe, context: isolated Context, report: inout StepReport) throws {
        while true {
            if environment.isCancelled() { throw StepError("cancelled", report: report, cancelled: true) }
            switch pipe.take() {
            case .end(let rejected):
                report.rows.rejected = rejected
                return
            case .failure(let message, let rejected):
                report.rows.rejected = rejected
                throw StepError(message, report: report)
            case .batch(let batch, let layouts, let rejected, let position, let prefetched):
                // The checkpoint, in the batch's transaction: where the feed goes on, and the rows
                // rejected since the last one.
                let checkpoint = position.flatMap { position in
                    environment.checkpoint?.at(position, rejected: rejected - report.rows.rejected)
                }
                report.rows.rejected = rejected
                if let next = pipe.rowsWaiting() { loader.expectNext(rows: next) }
                // The batch counts on its own. Its conflict records go on after the step's, in the
                // step's own array, moved over (not copied) for the batch: appending a batch's
                // records to the step's copied each one, a twentieth of a conflict-heavy import.
                // A batch that does not commit takes its records back out.
                var counted = StepReport(kind: report.kind, entity: report.entity)
                swap(&counted.conflictRecords, &report.conflictRecords)
                let recordsBefore = counted.conflictRecords.count
                var retries = 0
                var committing: UInt64?
                do {
                    try environment.withRetries(retried: { retries += 1 }) {
                        var fresh = StepReport(kind: report.kind, entity: report.entity)   // a try counts from nothing
                        swap(&fresh.conflictRecords, &counted.conflictRecords)
                        fresh.conflictRecords.removeRecords(from: recordsBefore)
                        // Consumed, not copied: a copy left `fresh` sharing the records' storage, and the
                        // batch's first conflict then copied every record of the step (17% of the writer).
                        counted = consume fresh
                        committing = nil   // a try that did not commit numbered nothing
                        _ = try context.commit(checkpoint: checkpoint) { db, changes in
                            try write(batch, layouts: layouts, prefetched: prefetched, in: db, changes: &changes, counts: &counted)
                            // The generation this commit follows: the write lock is the store's, so the
                            // commit is the next number (GRDB counts an empty commit too).
                            if prefetched != nil { committing = try store.backend.generation(in: db) }
                        }
                    }
                    if let committing {   // set only with rows read ahead, which know the batch's key range
                        ownCommits.append((committing + 1, prefetched?.span))
                        if ownCommits.count > 8 { ownCommits.removeFirst() }
                    }
                } catch {
                    swap(&counted.conflictRecords, &report.conflictRecords)
                    report.conflictRecords.removeRecords(from: recordsBefore)
                    report.retries += retries
                    report.batches.rolledBack += 1 + retries
                    throw failure(error, report: report)
                }
                swap(&counted.conflictRecords, &report.conflictRecords)
                report.rows.inserted += counted.rows.inserted
                report.rows.updated += counted.rows.updated
                report.conflicts += counted.conflicts
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
    mutating func hotSwap(from pipe: BatchPipe, context: isolated Context, report: inout StepReport) throws {
        var counted = report
        let checkpoint: CheckpointWrite? = environment.checkpoint.map { step in
            { db, changes in try step.at(.done, rejected: counted.rows.rejected)(db, changes) }
        }
        do {
            _ = try context.commit(checkpoint: checkpoint) { db, changes in
                try deleteAll(in: db, changes: &changes)
                counted.rows.deleted = changes.deleted
                loop: while true {
                    if environment.isCancelled() { throw StepError("cancelled", report: report, cancelled: true) }
                    switch pipe.take() {
                    case .end(let rejected):
                        counted.rows.rejected = rejected
                        break loop
                    case .failure(let message, let rejected):
                        counted.rows.rejected = rejected
                        throw StepError(message, report: report)
                    case .batch(let batch, let layouts, let rejected, _, _):
                        counted.rows.rejected = rejected
                        try write(batch, layouts: layouts, in: db, changes: &changes, counts: &counted)
                    }
                }
            }
        } catch {
            report.rows.rejected = counted.rows.rejected
            report.batches.rolledBack += 1
            throw failure(error, report: report)
        }
        report = counted
        report.batches.committed += 1
        environment.progress(report.rows)
    }

    /// Hot swap's first statement: every row of the entity goes, its keys recorded as deleted.
    private func deleteAll(in db: any StoreConnection, changes: inout SaveChanges) throws {
        let entity = environment.entity
        let sql = "DELETE FROM \(SQL.quote(entity.tableName)) RETURNING \(SQL.quoteList(entity.primaryKey))"
        try db.forEachRow(try db.prepare(sql), named: [:], positional: [], split: entity.primaryKey.count, assigned: []) { key, _ in
            changes.record(ObjectID(entity: entity.name, key: key), .deleted)
            changes.deleted += 1
        }
    }

    /// The step's error for a failed batch: a conflict under `error` keeps its record.
    private func failure(_ error: any Error, report: StepReport) -> any Error {
        guard let conflict = error as? RowConflict else {
            if var stepError = error as? StepError {
                stepError.report = report
                return stepError
            }
            return error
        }
        var report = report
        report.conflicts += 1
        report.conflictRecords.append(conflict.error.conflict.record(entity: environment.entity))
        return StepError("\(conflict.place): \(conflict.error)", report: report, cause: conflict.error)
    }

    /// One batch as it is written: its rows, their layouts, and where each layout has the key.
    struct Rows {
        let batch: RowBatch
        let layouts: [FeedBatcher.Layout]
        /// Per layout, the position of each primary-key column among its cells.
        let keyPositions: [[Int?]]
        /// The feed row of each conflict the batch recorded, in the order recorded: the batch's
        /// records are put in feed order at its end.
        var conflictRows: [Int] = []
        /// The conflicts, with their feed rows, for a per-save block (only when one reads them).
        var conflicts: [(row: Int, conflict: MergeConflict)] = []
    }

    /// Writes one batch in `db`'s transaction, adding to `counts`. Rows go in multi-row
    /// INSERTs; rows whose primary key is known taken are resolved by the merge policy with a
    /// few statements for the whole batch (`InsertWriter+Conflicts`); a multi-row INSERT that
    /// fails (a key taken inside the batch, a unique column, a bad value) is backed out by
    /// SQLite and its rows go again one at a time, each conflict resolved on its own.
    /// The batch's conflicts are recorded in `counts.conflictRecords`, in feed order.
    mutating func write(_ batch: RowBatch, layouts: [FeedBatcher.Layout], prefetched: PrefetchedRows? = nil, in db: any StoreConnection,
                        changes: inout SaveChanges, counts: inout StepReport) throws {
        let entity = environment.entity
        var rows = Rows(batch: batch, layouts: layouts, keyPositions: StoredRows.keyPositions(in: layouts, of: entity))
        let recordsBefore = counts.conflictRecords.count
        let existing = try prefetched.flatMap { try isCurrent($0, in: db) ? $0.rows : nil }
            ?? StoredRows.lookUp(batch, keyPositions: rows.keyPositions, of: entity, in: db)
        var taken: [Int] = []
        var run: [Int] = []
        run.reserveCapacity(batch.count)
        var runLayout = -1
        for row in 0..<batch.count {
            let layout = batch.layouts[row]
            if !existing.isEmpty, let position = rows.keyPositions[layout][0],
               existing.row(matching: batch, cell: batch.cells(of: row).lowerBound + position) != nil {
                taken.append(row)   // the merge policy decides, without a failing INSERT first
                continue
            }
            if layout != runLayout, !run.isEmpty {
                try insert(run[...], layout: runLayout, of: &rows, in: db, changes: &changes, counts: &counts)
                run.removeAll(keepingCapacity: true)
            }
            runLayout = layout
            run.append(row)
        }
        if !run.isEmpty { try insert(run[...], layout: runLayout, of: &rows, in: db, changes: &changes, counts: &counts) }
        if !taken.isEmpty { try resolveTaken(taken, existing: existing, of: &rows, in: db, changes: &changes, counts: &counts) }
        if entity.hasRowidKey, rows.keyPositions.contains(where: { $0[0] != nil }) { try db.advanceAssignedKeys(of: entity) }
        counts.conflicts += rows.conflictRows.count
        counts.conflictRecords.orderRecords(from: recordsBefore, by: rows.conflictRows)
        if changes.wantsConflicts {
            rows.conflicts.sort { $0.row < $1.row }
            changes.conflicts.append(contentsOf: rows.conflicts.map(\.conflict))
        }
    }

    /// True when `prefetched` holds the rows as they are now: every commit since it was read is
    /// one of this step's own, none of them with a key in the batch's range. Inside the batch's
    /// transaction, so nothing commits while the answer is used.
    private func isCurrent(_ prefetched: PrefetchedRows, in db: any StoreConnection) throws -> Bool {
        let now = try store.backend.generation(in: db)
        if now == prefetched.generation { return true }
        guard now > prefetched.generation, let span = prefetched.span else { return false }
        let since = ownCommits.filter { $0.generation > prefetched.generation && $0.generation <= now }
        return since.count == Int(now - prefetched.generation) && since.allSatisfy { $0.keys.map { !$0.overlaps(span) } ?? false }
    }

    /// Records a conflict of feed row `row` met by a one-row path.
    func record(_ conflict: MergeConflict, row: Int, of rows: inout Rows, changes: SaveChanges, counts: inout StepReport) {
        counts.conflictRecords.append(conflict.record(entity: environment.entity))
        rows.conflictRows.append(row)
        if changes.wantsConflicts { rows.conflicts.append((row, conflict)) }
    }

    /// Inserts rows of one layout, as many per statement as the parameter limit allows.
    private func insert(_ run: ArraySlice<Int>, layout: Int, of rows: inout Rows, in db: any StoreConnection, changes: inout SaveChanges,
                        counts: inout StepReport) throws {
        let columns = rows.layouts[layout].columns.count
        var start = run.startIndex
        while start < run.endIndex {
            let size = loader.nextChunk(run.endIndex - start, columns: columns)
            try insertChunk(run[start..<(start + size)], layout: layout, of: &rows, in: db, changes: &changes, counts: &counts)
            start += size
        }
    }

    /// One multi-row INSERT; when it fails, its rows one at a time.
    private func insertChunk(_ chunk: ArraySlice<Int>, layout: Int, of rows: inout Rows, in db: any StoreConnection,
                             changes: inout SaveChanges, counts: inout StepReport) throws {
        let entity = environment.entity, batch = rows.batch
        let keys = rows.keyPositions[layout]
        if chunk.count == 1 {
            return try insertOne(chunk.first!, of: &rows, in: db, changes: &changes, counts: &counts)
        }
        // An integer key the feed leaves out, or gives as NULL, is the store's to assign.
        let assigning = entity.hasRowidKey && (keys[0] == nil || chunk.contains { row in
            batch.cells[batch.cells(of: row).lowerBound + keys[0]!].kind != .integer
        })
        let (outcome, assigned) = try loader.insert(chunk, of: batch, layout: layout, columns: rows.layouts[layout].columns.map(\.name),
                                                    assigningKeys: assigning, in: db)
        guard case .done = outcome else {
            // Backed out whole: one row at a time finds the row and resolves or reports it.
            for row in chunk { try insertOne(row, of: &rows, in: db, changes: &changes, counts: &counts) }
            return
        }
        counts.rows.inserted += chunk.count
        changes.inserted += chunk.count
        if assigning {
            for key in assigned { changes.record(rowid: key, entity: entity.name, .inserted) }
        } else if entity.hasRowidKey {
            for row in chunk { changes.record(rowid: batch.cells[batch.cells(of: row).lowerBound + keys[0]!].number, entity: entity.name, .inserted) }
        } else {
            for row in chunk { changes.record(insertedID(batch, row: row, keys: keys), .inserted) }
        }
    }

    /// One row, with its own statement: a key or unique collision is resolved by the policy,
    /// any other failure names the feed line.
    private func insertOne(_ row: Int, of rows: inout Rows, in db: any StoreConnection, changes: inout SaveChanges,
                           counts: inout StepReport) throws {
        let entity = environment.entity, batch = rows.batch
        let layout = batch.layouts[row]
        let keys = rows.keyPositions[layout]
        let assigning = entity.hasRowidKey && (keys[0] == nil || batch.cells[batch.cells(of: row).lowerBound + keys[0]!].kind != .integer)
        let (outcome, assigned) = try loader.insert([row][...], of: batch, layout: layout,
                                                    columns: rows.layouts[layout].columns.map(\.name), assigningKeys: assigning, in: db)
        switch outcome {
        case .done:
            counts.rows.inserted += 1
            changes.inserted += 1
            if let key = assigned.first {
                changes.record(rowid: key, entity: entity.name, .inserted)
            } else if entity.hasRowidKey {
                changes.record(rowid: batch.cells[batch.cells(of: row).lowerBound + keys[0]!].number, entity: entity.name, .inserted)
            } else {
                changes.record(insertedID(batch, row: row, keys: keys), .inserted)
            }
        case .keyTaken:
            try resolveConflict(row, of: &rows, in: db, changes: &changes, counts: &counts)
        case .refused(let failure):
            throw StepError("\(place(batch.lines[row])): \(failure.message)", report: counts)
        }
    }

    /// The slow path for a row that collided: the policy decides, the conflict is kept.
    func resolveConflict(_ row: Int, existing: [StoreValue]? = nil, of rows: inout Rows, in db: any StoreConnection,
                         changes: inout SaveChanges, counts: inout StepReport) throws {
        let batch = rows.batch, layout = rows.layouts[batch.layouts[row]]
        let writer = SaveWriter(db: db, store: store, entity: environment.entity, policy: environment.mergePolicy,
                                job: environment.job, readSequence: 0, recompute: nil)
        let values = batch.cells(of: row).map { batch.value(at: $0) }
        let outcome: (id: ObjectID?, inserted: Bool, conflict: MergeConflict?)
        do {
            if let existing {
                let conflict = try writer.resolveConstraint(columns: layout.columns.map(\.name), values: values, existing: existing)
                let wrote = conflict.outcome != .rolledBack && conflict.outcome != .keptStore
                outcome = (wrote ? conflict.objectID : nil, false, conflict)
            } else {
                outcome = try writer.insert(columns: layout.columns.map(\.name), values: values)
            }
        } catch let error as MergeConflictError {
            throw RowConflict(place: place(batch.lines[row]), error: error)
        }
        if let conflict = outcome.conflict { record(conflict, row: row, of: &rows, changes: changes, counts: &counts) }
        if let id = outcome.id {
            if outcome.inserted {
                counts.rows.inserted += 1
                changes.inserted += 1
            } else {
                counts.rows.updated += 1
                changes.updated += 1
            }
            changes.record(id, outcome.inserted ? .inserted : .updated)
        }
    }

    private func insertedID(_ batch: RowBatch, row: Int, keys: [Int?]) -> ObjectID {
        let cells = batch.cells(of: row)
        return ObjectID(entity: environment.entity.name,
                        key: keys.map { position in position.map { batch.value(at: cells.lowerBound + $0) } ?? .null })
    }
}
