@_spi(BatchRunPackage) import BatchRunStore

/// The one import path: rows of typed cells (a feed's batches) written inside a save's
/// transaction (`Context.importBatch`, `Context.replaceAll`, both through the one commit), with
/// the store's `BulkLoader` as the backend-specific fast part. Rows go in multi-row writes; rows
/// whose primary key is known taken go to the `ConflictResolver` set-based
/// (`resolveBatch`); a multi-row write that fails (a key taken inside the batch, a unique
/// column, a bad value) is backed out by the database and its rows go again one at a time
/// through `SaveWriter.insert`, as an object save's inserts do, each conflict resolved on its
/// own. Rows are counted once, in the save's `SaveChanges`; conflicts are recorded in the
/// caller's `ConflictRecords`, in feed order.
///
/// ```swift
/// var importer = context.makeImporter(for: entity, policy: .objectTrump, job: "load")
/// let result = try context.importBatch(batch, columns: layouts.map(\.columns), prefetched: nil, with: &importer,
///                                      records: &records, checkpoint: nil)
/// ```
package struct RowImporter {
    package let store: Store
    package let entity: Entity
    package let policy: MergePolicy
    package let job: String
    /// The step's bulk loader, kept from batch to batch.
    package let loader: any BulkLoader
    /// An import lane's importer (`ImportLanes`): the identity sequence is not moved past the
    /// keys a batch gives inside `write`, but in the batch's turn, from `largestGivenKey` (a
    /// `setval` is not transactional: moved by batches out of their order, it went back).
    var advancesKeysInTurn = false
    /// The largest integer key the last batch written gave (with `advancesKeysInTurn`).
    var largestGivenKey: Int64?
    /// This import's last commits: each one's change generation and the range of the keys it
    /// wrote (nil: unknown), for telling whether rows read ahead are still current.
    private var ownCommits: [(generation: UInt64, keys: ClosedRange<Int64>?)] = []

    package init(store: Store, entity: Entity, policy: MergePolicy, job: String) {
        self.store = store
        self.entity = entity
        self.policy = policy
        self.job = job
        loader = store.backend.makeBulkLoader(for: entity)
    }

    /// One batch as it is written: its rows, their layouts' columns, and where each layout has the key.
    package struct Rows {
        package let batch: RowBatch
        /// Per layout, the columns its cells fill.
        package let columns: [[Column]]
        /// Per layout, the position of each primary-key column among its cells.
        package let keyPositions: [[Int?]]
        /// The feed row of each conflict the batch recorded, in the order recorded: the batch's
        /// records are put in feed order at its end.
        package var conflictRows: [Int] = []
        /// The conflicts, with their feed rows, for a per-save block (only when one reads them).
        package var conflicts: [(row: Int, conflict: MergeConflict)] = []
    }

    /// A batch committed with rows read ahead: its commit's change generation and its key range.
    package mutating func committed(generation: UInt64, keys: ClosedRange<Int64>?) {
        ownCommits.append((generation, keys))
        if ownCommits.count > 8 { ownCommits.removeFirst() }
    }

    /// Writes one batch in `db`'s transaction. The batch's conflicts are recorded in `records`,
    /// in feed order; a row the store refuses, or a conflict under `error`, throws
    /// `ImportRowFailure` with the row's feed line.
    package mutating func write(_ batch: RowBatch, columns: [[Column]], prefetched: PrefetchedRows? = nil, in db: any StoreConnection,
                        changes: inout SaveChanges, records: inout ConflictRecords) throws {
        var rows = Rows(batch: batch, columns: columns, keyPositions: StoredRows.keyPositions(in: columns, of: entity))
        let recordsBefore = records.count
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
                try insert(run[...], layout: runLayout, of: &rows, in: db, changes: &changes, records: &records)
                run.removeAll(keepingCapacity: true)
            }
            runLayout = layout
            run.append(row)
        }
        if !run.isEmpty { try insert(run[...], layout: runLayout, of: &rows, in: db, changes: &changes, records: &records) }
        if !taken.isEmpty { try resolveTaken(taken, existing: existing, of: &rows, in: db, changes: &changes, records: &records) }
        if entity.hasRowidKey, rows.keyPositions.contains(where: { $0[0] != nil }) {
            if advancesKeysInTurn {
                largestGivenKey = Self.largestKey(of: batch, keyPositions: rows.keyPositions)
            } else {
                try db.advanceAssignedKeys(of: entity)
            }
        }
        records.orderRecords(from: recordsBefore, by: rows.conflictRows)
        if changes.wantsConflicts {
            rows.conflicts.sort { $0.row < $1.row }
            changes.conflicts.append(contentsOf: rows.conflicts.map(\.conflict))
        }
    }

    /// The largest integer key `batch`'s rows give (nil: none).
    private static func largestKey(of batch: RowBatch, keyPositions: [[Int?]]) -> Int64? {
        var largest: Int64?
        for row in 0..<batch.count {
            guard let position = keyPositions[batch.layouts[row]][0] else { continue }
            let cell = batch.cells[batch.cells(of: row).lowerBound + position]
            if cell.kind == .integer { largest = max(largest ?? cell.number, cell.number) }
        }
        return largest
    }

    /// Hot swap's first statement: every row of the entity goes, its keys recorded as deleted.
    func deleteAll(in db: any StoreConnection, changes: inout SaveChanges) throws {
        let sql = "DELETE FROM \(SQL.quote(entity.tableName)) RETURNING \(SQL.quoteList(entity.primaryKey))"
        try db.forEachRow(try db.prepare(sql), named: [:], positional: [], split: entity.primaryKey.count, assigned: []) { key, _ in
            changes.record(ObjectID(entity: entity.name, key: key), .deleted)
            changes.deleted += 1
        }
    }

    /// True when `prefetched` holds the rows as they are now: every commit since it was read is
    /// one of this import's own, none of them with a key in the batch's range. Inside the batch's
    /// transaction, so nothing commits while the answer is used.
    private func isCurrent(_ prefetched: PrefetchedRows, in db: any StoreConnection) throws -> Bool {
        let now = try store.backend.generation(in: db)
        if now == prefetched.generation { return true }
        guard now > prefetched.generation, let span = prefetched.span else { return false }
        let since = ownCommits.filter { $0.generation > prefetched.generation && $0.generation <= now }
        return since.count == Int(now - prefetched.generation) && since.allSatisfy { $0.keys.map { !$0.overlaps(span) } ?? false }
    }

    /// Records a conflict of feed row `row` met by a one-row path.
    package func record(_ conflict: MergeConflict, row: Int, of rows: inout Rows, changes: SaveChanges, records: inout ConflictRecords) {
        records.append(conflict.record(entity: entity))
        rows.conflictRows.append(row)
        if changes.wantsConflicts { rows.conflicts.append((row, conflict)) }
    }

    /// Inserts rows of one layout, as many per statement as the parameter limit allows.
    private func insert(_ run: ArraySlice<Int>, layout: Int, of rows: inout Rows, in db: any StoreConnection, changes: inout SaveChanges,
                        records: inout ConflictRecords) throws {
        let columns = rows.columns[layout].count
        var start = run.startIndex
        while start < run.endIndex {
            let size = loader.nextChunk(run.endIndex - start, columns: columns)
            try insertChunk(run[start..<(start + size)], layout: layout, of: &rows, in: db, changes: &changes, records: &records)
            start += size
        }
    }

    /// One multi-row INSERT; when it fails, its rows one at a time.
    private func insertChunk(_ chunk: ArraySlice<Int>, layout: Int, of rows: inout Rows, in db: any StoreConnection,
                             changes: inout SaveChanges, records: inout ConflictRecords) throws {
        let batch = rows.batch
        let keys = rows.keyPositions[layout]
        if chunk.count == 1 {
            return try insertOne(chunk.first!, of: &rows, in: db, changes: &changes, records: &records)
        }
        // An integer key the feed leaves out, or gives as NULL, is the store's to assign.
        let assigning = entity.hasRowidKey && (keys[0] == nil || chunk.contains { row in
            batch.cells[batch.cells(of: row).lowerBound + keys[0]!].kind != .integer
        })
        let (outcome, assigned) = try loader.insert(chunk, of: batch, layout: layout, columns: rows.columns[layout].map(\.name),
                                                    assigningKeys: assigning, in: db)
        guard case .done = outcome else {
            // Backed out whole: one row at a time finds the row and resolves or reports it.
            for row in chunk { try insertOne(row, of: &rows, in: db, changes: &changes, records: &records) }
            return
        }
        changes.inserted += chunk.count
        if assigning {
            changes.record(rowids: assigned, entity: entity.name, .inserted)
        } else if entity.hasRowidKey, let key = keys[0] {
            changes.record(rowids: chunk.lazy.map { batch.cells[batch.cells(of: $0).lowerBound + key].number }, entity: entity.name, .inserted)
        } else {
            for row in chunk { changes.record(insertedID(batch, row: row, keys: keys), .inserted) }
        }
    }

    /// One row, with its own statement: a key or unique collision is resolved by the policy,
    /// any other failure names the feed line.
    private func insertOne(_ row: Int, of rows: inout Rows, in db: any StoreConnection, changes: inout SaveChanges,
                           records: inout ConflictRecords) throws {
        let batch = rows.batch
        let layout = batch.layouts[row]
        let keys = rows.keyPositions[layout]
        let assigning = entity.hasRowidKey && (keys[0] == nil || batch.cells[batch.cells(of: row).lowerBound + keys[0]!].kind != .integer)
        let (outcome, assigned) = try loader.insert([row][...], of: batch, layout: layout,
                                                    columns: rows.columns[layout].map(\.name), assigningKeys: assigning, in: db)
        switch outcome {
        case .done:
            changes.inserted += 1
            if let key = assigned.first {
                changes.record(rowid: key, entity: entity.name, .inserted)
            } else if entity.hasRowidKey {
                changes.record(rowid: batch.cells[batch.cells(of: row).lowerBound + keys[0]!].number, entity: entity.name, .inserted)
            } else {
                changes.record(insertedID(batch, row: row, keys: keys), .inserted)
            }
        case .keyTaken:
            try resolveConflict(row, of: &rows, in: db, changes: &changes, records: &records)
        case .refused(let failure):
            throw ImportRowFailure.refused(line: batch.lines[row], message: failure.message)
        }
    }

    /// The slow path for a row that collided: the policy decides, the conflict is kept.
    func resolveConflict(_ row: Int, existing: [StoreValue]? = nil, of rows: inout Rows, in db: any StoreConnection,
                         changes: inout SaveChanges, records: inout ConflictRecords) throws {
        let batch = rows.batch, columns = rows.columns[batch.layouts[row]].map(\.name)
        let writer = SaveWriter(db: db, store: store, entity: entity, policy: policy, job: job, readSequence: 0, recompute: nil)
        let values = batch.cells(of: row).map { batch.value(at: $0) }
        let outcome: InsertOutcome
        do {
            if let existing {
                outcome = try writer.resolver.resolveConstraint(columns: columns, values: values, existing: existing)
            } else {
                outcome = try writer.insert(columns: columns, values: values)
            }
        } catch let error as MergeConflictError {
            throw ImportRowFailure.conflict(line: batch.lines[row], error)
        }
        if let conflict = outcome.conflict { record(conflict, row: row, of: &rows, changes: changes, records: &records) }
        outcome.record(in: &changes)   // the row, and any row overwrite deleted for holding one of its unique values
    }

    /// Resolves `taken` (feed order) against `existing`. The first row with a key resolves
    /// set-based; a later row with the same key goes on its own, against the row as the first
    /// left it.
    private func resolveTaken(_ taken: [Int], existing: StoredRows, of rows: inout Rows, in db: any StoreConnection,
                              changes: inout SaveChanges, records: inout ConflictRecords) throws {
        let batch = rows.batch
        if policy == .error {
            // The first conflict stops the batch, with its record: the one-row path throws it.
            let stored = existing.row(matching: batch, cell: keyCell(of: taken[0], in: rows))
            return try resolveConflict(taken[0], existing: stored.map(existing.values(ofRow:)), of: &rows, in: db,
                                       changes: &changes, records: &records)
        }
        var seen = [Bool](repeating: false, count: existing.rows.count)   // by stored row
        var firsts: [Int: [Int]] = [:]   // by layout
        var repeats: [Int] = []
        for row in taken {
            let stored = existing.row(matching: batch, cell: keyCell(of: row, in: rows))!
            if !seen[stored] {
                seen[stored] = true
                firsts[batch.layouts[row], default: []].append(row)
            } else {
                repeats.append(row)
            }
        }
        let resolver = ConflictResolver(db: db, store: store, entity: entity, policy: policy, job: job, readSequence: 0, recompute: nil)
        for (layout, group) in firsts.sorted(by: { $0.key < $1.key }) {
            try resolver.resolveBatch(group, layout: layout, existing: existing, of: &rows, loader: loader, changes: &changes,
                                      records: &records) { row, stored, rows, changes, records in
                try resolveConflict(row, existing: stored, of: &rows, in: db, changes: &changes, records: &records)
            }
        }
        for row in repeats { try resolveConflict(row, of: &rows, in: db, changes: &changes, records: &records) }
    }

    /// The key cell of a row whose layout has the (one-column) key, as an index into the batch's cells.
    private func keyCell(of row: Int, in rows: Rows) -> Int {
        rows.batch.cells(of: row).lowerBound + rows.keyPositions[rows.batch.layouts[row]][0]!
    }

    private func insertedID(_ batch: RowBatch, row: Int, keys: [Int?]) -> ObjectID {
        let cells = batch.cells(of: row)
        return ObjectID(entity: entity.name,
                        key: keys.map { position in position.map { batch.value(at: cells.lowerBound + $0) } ?? .null })
    }
}
