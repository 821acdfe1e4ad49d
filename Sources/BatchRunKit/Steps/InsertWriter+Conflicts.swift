/// Constraint conflicts resolved set-based: a batch's rows whose primary key is taken (found
/// with the store's old values by `existingRows`: one range scan, or a query per 1,000 keys)
/// are written by the merge policy with one statement per chunk of rows, and recorded exactly as the one-row
/// path (`SaveWriter.resolveConstraint`) records them. The resolved values are known without
/// reading them back: ours, or for store-trump the stored value where it is not NULL (reading
/// every row back with `RETURNING` cost a quarter of the writer's time). Overwrite alone reads
/// its rows back, as it may store a column's default in place of our NULL.
extension InsertWriter {
    /// Resolves `taken` (feed order) against `existing`. The first row with a key resolves
    /// set-based; a later row with the same key goes on its own, against the row as the first
    /// left it. A chunk whose statement fails (another unique column, a bad value) goes row by
    /// row, where the failure is resolved or reported as before.
    func resolveTaken(_ taken: [Int], existing: [StoreValue: [StoreValue]], of rows: inout Rows, in db: any StoreConnection,
                      changes: inout SaveChanges, counts: inout StepReport) throws {
        let batch = rows.batch
        if environment.mergePolicy == .error {
            // The first conflict stops the batch, with its record: the one-row path throws it.
            return try resolveConflict(taken[0], existing: existing[key(of: taken[0], in: rows)], of: &rows, in: db,
                                       changes: &changes, counts: &counts)
        }
        var seen = Set<StoreValue>(minimumCapacity: taken.count)
        var firsts: [Int: [Int]] = [:]   // by layout
        var repeats: [Int] = []
        for row in taken {
            if seen.insert(key(of: row, in: rows)).inserted {
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

    /// The key cell of a row whose layout has the (one-column) key.
    private func key(of row: Int, in rows: Rows) -> StoreValue {
        let batch = rows.batch
        return batch.value(at: batch.cells(of: row).lowerBound + rows.keyPositions[batch.layouts[row]][0]!)
    }

    /// Rows of one layout, each key taken once.
    private func resolve(_ group: [Int], layout: Int, existing: [StoreValue: [StoreValue]], of rows: inout Rows,
                         in db: any StoreConnection, changes: inout SaveChanges, counts: inout StepReport) throws {
        let entity = environment.entity, policy = environment.mergePolicy, batch = rows.batch
        let columns = rows.layouts[layout].columns.map(\.name)
        let fed = columns.map { entity.position(ofColumn: $0)! }
        let keyIndex = entity.primaryKeyIndexes[0]
        let values = group.map { row in batch.cells(of: row).map { batch.value(at: $0) } }
        let keyFed = fed.firstIndex(of: keyIndex)!
        // Each row's stored values, looked up once.
        let olds = values.map { existing[$0[keyFed]]! }
        // Which rows the policy writes, and with which statement.
        var writes: [Int] = []   // offsets in `group`
        var resolution = BulkResolution.ours
        switch policy {
        case .objectTrump, .recompute:
            if fed.contains(where: { $0 != keyIndex }) { writes = Array(group.indices) }
        case .storeTrump:
            resolution = .fillNulls
            writes = group.indices.filter { offset in
                fed.indices.contains { olds[offset][fed[$0]] == .null && values[offset][$0] != .null }
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
            let outcome = try loader.resolve(chunk.map { group[$0] }, keys: chunk.map { values[$0][keyFed] }, of: batch, layout: layout,
                                             columns: columns, as: resolution, in: db)
            if case .done = outcome {} else {
                for offset in chunk { failed[offset] = true }
            }
            start += size
        }
        var written = [Bool](repeating: false, count: group.count)
        for offset in writes { written[offset] = true }
        // Overwrite's INSERT OR REPLACE stores a NOT NULL column's default where ours is NULL, and
        // SQLite's affinity may change a value: what it wrote is read back (as `storedRows` reads).
        let replaced = resolution == .replace
            ? try storedRows(writes.filter { !failed[$0] }.map { values[$0][keyFed] }, in: db) : [:]
        for (offset, row) in group.enumerated() {
            let old = olds[offset]
            if failed[offset] {
                try resolveConflict(row, existing: old, of: &rows, in: db, changes: &changes, counts: &counts)
                continue
            }
            // A fed column as the policy left it.
            let isWritten = written[offset]
            let stored = resolution == .replace ? replaced[values[offset][keyFed]] : nil
            func after(_ position: Int) -> StoreValue {
                guard isWritten else { return old[fed[position]] }
                if let stored { return stored[fed[position]] }
                return resolution == .fillNulls && old[fed[position]] != .null ? old[fed[position]] : values[offset][position]
            }
            let id = ObjectID(entity: entity.name, key: ManagedObject.key(entity, old))
            let outcome: MergeConflict.Outcome
            switch policy {
            case .storeTrump: outcome = fed.indices.allSatisfy({ after($0) == old[fed[$0]] }) ? .keptStore : .merged
            case .objectTrump, .recompute: outcome = .keptOurs
            case .overwrite: outcome = .overwritten
            case .rollback, .error: outcome = .rolledBack
            }
            let properties: [MergeConflict.Property] = fed.indices.compactMap { position in
                let index = fed[position], ours = values[offset][position]
                guard old[index] != ours else { return nil }
                return .init(name: entity.columns[index].name, original: nil, store: old[index], ours: ours, resolved: after(position))
            }
            rows.conflicts.append((row, MergeConflict(
                job: environment.job, objectID: id, kind: .constraint, policy: policy, outcome: outcome,
                changedBy: store.changeLog.lastWriter(of: id) ?? MergeConflict.outsideThisRun, properties: properties)))
            if outcome != .rolledBack && outcome != .keptStore {
                counts.rows.updated += 1
                changes.updated += 1
                changes.record(id, .updated)
            }
        }
    }
}
