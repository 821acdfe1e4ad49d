@_spi(BatchRunPackage) import BatchRunStore

/// Constraint conflicts resolved set-based, for an import's batch (`RowImporter`): its rows whose
/// primary key is taken (found with the store's old values by `StoredRows.lookUp`: one range
/// scan, or a query per 1,000 keys) are written as the policy decides (`constraintWrite`, the
/// same decision the one-row `resolveConstraint` takes) by the store's `BulkLoader`, one
/// statement per chunk of rows, and recorded as the one-row path records them, straight from
/// the cells of the batch and of the stored rows into the step's compact records (per row only
/// its key and `ObjectID` are made; no record or conflict object, unless a per-save block reads
/// the conflicts). The resolved values are known without reading them back: ours, or for
/// store-trump the stored value where it is not NULL (reading every row back with `RETURNING`
/// cost a quarter of the writer's time). Overwrite alone reads its rows back, as it may store a
/// column's default in place of our NULL.
extension ConflictResolver {
    /// Resolves rows of one layout, each key taken once. A chunk whose statement fails (another
    /// unique column, a bad value) goes row by row through `oneByOne` (the row, its stored values),
    /// where the failure is resolved or reported as an object save's would be.
    func resolveBatch(_ group: [Int], layout: Int, existing: StoredRows, of rows: inout RowImporter.Rows, loader: any BulkLoader,
                      changes: inout SaveChanges, records: inout ConflictRecords,
                      oneByOne: (Int, [StoreValue], inout RowImporter.Rows, inout SaveChanges, inout ConflictRecords) throws -> Void) throws {
        let batch = rows.batch
        let columns = rows.columns[layout].map(\.name)
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
        let resolution = Self.constraintWrite(policy)
        switch resolution {
        case .ours:
            if fed.contains(where: { $0 != keyIndex }) { writes = Array(group.indices) }
        case .fillNulls:
            writes = group.indices.filter { offset in
                fed.indices.contains { stored.cells[old(offset, $0)].kind == .null && batch.cells[ours(offset, $0)].kind != .null }
            }
        case .replace:
            writes = Array(group.indices)
        case nil:
            break
        }
        var failed = [Bool](repeating: false, count: group.count)   // by offset: its chunk failed, it goes row by row
        var start = 0
        while start < writes.count {
            let size = loader.nextChunk(writes.count - start, columns: columns.count)
            let chunk = writes[start..<(start + size)]
            let outcome = try loader.resolve(chunk.map { group[$0] }, keys: chunk.map { batch.value(at: ours($0, keyFed)) }, of: batch,
                                             layout: layout, columns: columns, as: resolution!, in: db)
            if case .done = outcome {} else {
                for offset in chunk { failed[offset] = true }
            }
            start += size
        }
        var written = [Bool](repeating: false, count: group.count)
        for offset in writes { written[offset] = true }
        // Overwrite's INSERT OR REPLACE stores a NOT NULL column's default where ours is NULL, and
        // SQLite's affinity may change a value: what it wrote is read back (as `StoredRows.read` reads).
        // Object-trump's NULL for a NOT NULL column with a default stores the default: those rows
        // are read back too.
        let defaulted = fed.indices.filter { entity.columns[fed[$0]].notNull && entity.columns[fed[$0]].defaultLiteral != nil }
        let tookDefaults = resolution == .ours && !defaulted.isEmpty && writes.contains { offset in
            defaulted.contains { batch.cells[ours(offset, $0)].kind == .null }
        }
        let replaced = resolution == .replace || tookDefaults
            ? try StoredRows.read(writes.filter { !failed[$0] }.map { batch.value(at: ours($0, keyFed)) }, of: entity, in: db) : nil
        // Names stored once in the step's records.
        let jobName = records.name(job), entityName = records.name(entity.name)
        let keyName = records.name(entity.primaryKey[0])
        let outside = records.name(MergeConflict.outsideThisRun)
        let propertyNames = fed.map { records.name(entity.columns[$0].name) }
        let hasRowidKey = entity.hasRowidKey
        // Who last wrote each row in this run, looked up together (one lock, not one a row).
        let ids = olds.map { ObjectID(entity: entity.name, single: stored.value(at: existing.cell(keyIndex, ofRow: $0))) }
        let lastWriters = store.changeLog.lastWriters(of: ids, entity: entity.name)
        var lastWriterName: (String, Int32)?
        var differing: [Int] = []   // the properties a conflict lists, for one row at a time
        differing.reserveCapacity(fed.count)
        for (offset, row) in group.enumerated() {
            if failed[offset] {
                try oneByOne(row, existing.values(ofRow: olds[offset]), &rows, &changes, &records)
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
            // Store-trump fills a column only where the stored one is NULL and ours is not: a row it
            // wrote changed, one it did not write is kept.
            let outcome = Self.constraintOutcome(policy, filled: isWritten)
            let keyCell = existing.cell(keyIndex, ofRow: olds[offset])
            let id = ids[offset]
            // The properties the conflict lists: those whose stored value is not ours.
            differing.removeAll(keepingCapacity: true)
            for position in fed.indices where !RowBatch.cellsEqual(stored, old(offset, position), batch, ours(offset, position)) {
                differing.append(position)
            }
            let changedBy: Int32
            if let writer = lastWriters[offset] {
                if lastWriterName?.0 != writer { lastWriterName = (writer, records.name(writer)) }
                changedBy = lastWriterName!.1
            } else {
                changedBy = outside
            }
            records.begin(job: jobName, entity: entityName, kind: .constraint, policy: policy, outcome: outcome, changedBy: changedBy)
            records.appendKey(name: keyName, value: records.value(stored, at: keyCell))
            for position in differing {
                let (values, cell) = after(position)
                let before = records.value(stored, at: old(offset, position))
                let mine = records.value(batch, at: ours(offset, position))
                let resolved = records.value(values, at: cell)
                records.appendProperty(name: propertyNames[position], original: .null, store: before, ours: mine, resolved: resolved)
            }
            rows.conflictRows.append(row)
            if changes.wantsConflicts {
                let properties: [MergeConflict.Property] = differing.map { position in
                    let (values, cell) = after(position)
                    return .init(name: entity.columns[fed[position]].name, original: nil, store: stored.value(at: old(offset, position)),
                                 ours: batch.value(at: ours(offset, position)), resolved: values.value(at: cell))
                }
                rows.conflicts.append((row, MergeConflict(
                    job: job, objectID: id, kind: .constraint, policy: policy, outcome: outcome,
                    changedBy: records.names[Int(changedBy)], properties: properties)))
            }
            if Self.wrote(outcome) {
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
