/// Constraint conflicts resolved set-based: a batch's rows whose primary key is taken (found
/// with the store's old values by `StoredRows.lookUp`: one range scan, or a query per 1,000 keys)
/// are written by the merge policy with one statement per chunk of rows, and recorded exactly as the one-row
/// path (`SaveWriter.resolveConstraint`) records them, straight from the cells of the batch and
/// of the stored rows into the step's compact records (per row only its key and `ObjectID` are
/// made; no record or conflict object, unless a per-save block reads the conflicts). The resolved values are known without
/// reading them back: ours, or for store-trump the stored value where it is not NULL (reading
/// every row back with `RETURNING` cost a quarter of the writer's time). Overwrite alone reads
/// its rows back, as it may store a column's default in place of our NULL.
extension InsertWriter {
    /// Resolves `taken` (feed order) against `existing`. The first row with a key resolves
    /// set-based; a later row with the same key goes on its own, against the row as the first
    /// left it. A chunk whose statement fails (another unique column, a bad value) goes row by
    /// row, where the failure is resolved or reported as before.
    func resolveTaken(_ taken: [Int], existing: StoredRows, of rows: inout Rows, in db: any StoreConnection,
                      changes: inout SaveChanges, counts: inout StepReport) throws {
        let batch = rows.batch
        if environment.mergePolicy == .error {
            // The first conflict stops the batch, with its record: the one-row path throws it.
            let stored = existing.row(matching: batch, cell: keyCell(of: taken[0], in: rows))
            return try resolveConflict(taken[0], existing: stored.map(existing.values(ofRow:)), of: &rows, in: db,
                                       changes: &changes, counts: &counts)
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
        for (layout, group) in firsts.sorted(by: { $0.key < $1.key }) {
            try resolve(group, layout: layout, existing: existing, of: &rows, in: db, changes: &changes, counts: &counts)
        }
        for row in repeats { try resolveConflict(row, of: &rows, in: db, changes: &changes, counts: &counts) }
    }

    /// The key cell of a row whose layout has the (one-column) key, as an index into the batch's cells.
    private func keyCell(of row: Int, in rows: Rows) -> Int {
        rows.batch.cells(of: row).lowerBound + rows.keyPositions[rows.batch.layouts[row]][0]!
    }

    /// Rows of one layout, each key taken once.
    private func resolve(_ group: [Int], layout: Int, existing: StoredRows, of rows: inout Rows,
                         in db: any StoreConnection, changes: inout SaveChanges, counts: inout StepReport) throws {
        let entity = environment.entity, policy = environment.mergePolicy, batch = rows.batch
        let columns = rows.layouts[layout].columns.map(\.name)
        let fed = columns.map { entity.position(ofColumn: $0)! }
        let keyIndex = entity.primaryKeyIndexes[0]
        let keyFed = fed.firstIndex(of: keyIndex)!
        let stored = existing.rows
        // Each row's first cell in the batch, and its stored row, looked up once.
        let firstCells = group.map { batch.cells(of: $0).lowerBound }
        let olds = firstCells.map { existing.row(matching: batch, cell: $0 + keyFed)! }
        func ours(_ offset: Int, _ position: Int) -> Int { firstCells[offset] + position }
        func old(_ offset: Int, _ position: Int) -> Int { existing.cell(fed[position], ofRow: olds[offset]) }
        // Which rows the policy writes, and with which statement.
        var writes: [Int] = []   // offsets in `group`
        var resolution = BulkResolution.ours
        switch policy {
        case .objectTrump, .recompute:
            if fed.contains(where: { $0 != keyIndex }) { writes = Array(group.indices) }
        case .storeTrump:
            resolution = .fillNulls
            writes = group.indices.filter { offset in
                fed.indices.contains { stored.cells[old(offset, $0)].kind == .null && batch.cells[ours(offset, $0)].kind != .null }
            }
        case .overwrite:
            resolution = .replace
            writes = Array(group.indices)
        case .rollback, .error:
            break
        }
        var failed = [Bool](repeating: false, count: group.count)   // by offset: its chunk failed, it goes row by row
        var start = 0
        while start < writes.count {
            let size = loader.nextChunk(writes.count - start, columns: columns.count)
            let chunk = writes[start..<(start + size)]
            let outcome = try loader.resolve(chunk.map { group[$0] }, keys: chunk.map { batch.value(at: ours($0, keyFed)) }, of: batch,
                                             layout: layout, columns: columns, as: resolution, in: db)
            if case .done = outcome {} else {
                for offset in chunk { failed[offset] = true }
            }
            start += size
        }
        var written = [Bool](repeating: false, count: group.count)
        for offset in writes { written[offset] = true }
        // Overwrite's INSERT OR REPLACE stores a NOT NULL column's default where ours is NULL, and
        // SQLite's affinity may change a value: what it wrote is read back (as `StoredRows.read` reads).
        let replaced = resolution == .replace
            ? try StoredRows.read(writes.filter { !failed[$0] }.map { batch.value(at: ours($0, keyFed)) }, of: entity, in: db) : nil
        // Names stored once in the step's records.
        let job = counts.conflictRecords.name(environment.job), entityName = counts.conflictRecords.name(entity.name)
        let keyName = counts.conflictRecords.name(entity.primaryKey[0])
        let outside = counts.conflictRecords.name(MergeConflict.outsideThisRun)
        let propertyNames = fed.map { counts.conflictRecords.name(entity.columns[$0].name) }
        let hasRowidKey = entity.hasRowidKey
        // Who last wrote each row in this run, looked up together (one lock, not one a row).
        let ids = olds.map { ObjectID(entity: entity.name, single: stored.value(at: existing.cell(keyIndex, ofRow: $0))) }
        let lastWriters = store.changeLog.lastWriters(of: ids, entity: entity.name)
        var lastWriterName: (String, Int32)?
        var differing: [Int] = []   // the properties a conflict lists, for one row at a time
        differing.reserveCapacity(fed.count)
        for (offset, row) in group.enumerated() {
            if failed[offset] {
                try resolveConflict(row, existing: existing.values(ofRow: olds[offset]), of: &rows, in: db, changes: &changes,
                                    counts: &counts)
                continue
            }
            // A fed column as the policy left it: a cell of the batch, of the stored rows, or of
            // the rows read back.
            let isWritten = written[offset]
            let replacedRow = replaced.flatMap { $0.row(matching: batch, cell: ours(offset, keyFed)) }
            func after(_ position: Int) -> (RowBatch, Int) {
                guard isWritten else { return (stored, old(offset, position)) }
                if let replaced, let replacedRow { return (replaced.rows, replaced.cell(fed[position], ofRow: replacedRow)) }
                if resolution == .fillNulls && stored.cells[old(offset, position)].kind != .null { return (stored, old(offset, position)) }
                return (batch, ours(offset, position))
            }
            let outcome: MergeConflict.Outcome
            switch policy {
            case .storeTrump:
                outcome = fed.indices.allSatisfy({ position in
                    let (values, cell) = after(position)
                    return RowBatch.cellsEqual(values, cell, stored, old(offset, position))
                }) ? .keptStore : .merged
            case .objectTrump, .recompute: outcome = .keptOurs
            case .overwrite: outcome = .overwritten
            case .rollback, .error: outcome = .rolledBack
            }
            let keyCell = existing.cell(keyIndex, ofRow: olds[offset])
            let id = ids[offset]
            // The properties the conflict lists: those whose stored value is not ours.
            differing.removeAll(keepingCapacity: true)
            for position in fed.indices where !RowBatch.cellsEqual(stored, old(offset, position), batch, ours(offset, position)) {
                differing.append(position)
            }
            let changedBy: Int32
            if let writer = lastWriters[offset] {
                if lastWriterName?.0 != writer { lastWriterName = (writer, counts.conflictRecords.name(writer)) }
                changedBy = lastWriterName!.1
            } else {
                changedBy = outside
            }
            counts.conflictRecords.begin(job: job, entity: entityName, kind: .constraint, policy: policy, outcome: outcome,
                                         changedBy: changedBy)
            counts.conflictRecords.appendKey(name: keyName, value: counts.conflictRecords.value(stored, at: keyCell))
            for position in differing {
                let (values, cell) = after(position)
                let before = counts.conflictRecords.value(stored, at: old(offset, position))
                let mine = counts.conflictRecords.value(batch, at: ours(offset, position))
                let resolved = counts.conflictRecords.value(values, at: cell)
                counts.conflictRecords.appendProperty(name: propertyNames[position], original: .null,
                                                      store: before, ours: mine, resolved: resolved)
            }
            rows.conflictRows.append(row)
            if changes.wantsConflicts {
                let properties: [MergeConflict.Property] = differing.map { position in
                    let (values, cell) = after(position)
                    return .init(name: entity.columns[fed[position]].name, original: nil, store: stored.value(at: old(offset, position)),
                                 ours: batch.value(at: ours(offset, position)), resolved: values.value(at: cell))
                }
                rows.conflicts.append((row, MergeConflict(
                    job: environment.job, objectID: id, kind: .constraint, policy: policy, outcome: outcome,
                    changedBy: counts.conflictRecords.names[Int(changedBy)], properties: properties)))
            }
            if outcome != .rolledBack && outcome != .keptStore {
                counts.rows.updated += 1
                changes.updated += 1
                if hasRowidKey, case .integer(let rowid)? = id.singleKey {
                    changes.record(rowid: rowid, entity: entity.name, .updated)
                } else {
                    changes.record(id, .updated)
                }
            }
        }
    }
}
