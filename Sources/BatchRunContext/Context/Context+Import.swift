@_spi(BatchRunPackage) import BatchRunStore

/// What an import step asks of its context (inside the library): the one import path
/// (`RowImporter`) through the one save path, and rows read ahead from a snapshot.
///
/// ```swift
/// var importer = context.makeImporter(for: entity, policy: environment.mergePolicy, job: environment.job)
/// let result = try context.importBatch(batch, columns: columns, prefetched: ahead, with: &importer,
///                                      records: &report.conflictRecords, checkpoint: checkpoint)
/// ```
extension Context {
    /// An import's writer for `entity`, kept from batch to batch (its bulk loader, its commits).
    package nonisolated func makeImporter(for entity: Entity, policy: MergePolicy, job: String) -> RowImporter {
        RowImporter(store: store, entity: entity, policy: policy, job: job)
    }

    /// Writes one batch of rows in its own save (`columns`: per layout, the columns its cells
    /// fill), with `checkpoint` in the same transaction; its conflicts go to `records`, in feed
    /// order. `prefetched`: the batch's stored rows read ahead (`readAhead`), used when still current.
    package func importBatch(_ batch: RowBatch, columns: [[Column]], prefetched: PrefetchedRows?, with importer: inout RowImporter,
                     records: inout ConflictRecords, checkpoint: CheckpointWrite?) throws -> SaveResult {
        var committing: UInt64?
        let (_, result) = try commit(checkpoint: checkpoint) { db, changes in
            try importer.write(batch, columns: columns, prefetched: prefetched, in: db, changes: &changes, records: &records)
            // The generation this commit follows: the write lock is the store's, so the commit is
            // the next number (GRDB counts an empty commit too).
            if prefetched != nil { committing = try store.backend.generation(in: db) }
        }
        // Set only with rows read ahead, which know the batch's key range.
        if let committing { importer.committed(generation: committing + 1, keys: prefetched?.span) }
        return result
    }

    /// Lanes for an import into `entity` over `count` writer sessions at once (`ImportLanes`),
    /// as many as the store gives it (`StoreBackend.reserveImportLanes`); nil when that is fewer
    /// than two, or inside `atomically` (one transaction holds every write).
    package func makeImportLanes(_ count: Int, for entity: Entity, policy: MergePolicy, job: String) -> ImportLanes? {
        guard count >= 2, !isAtomic else { return nil }
        let numbers = store.backend.reserveImportLanes(count)
        guard numbers.count >= 2 else {
            store.backend.releaseImportLanes(numbers)
            return nil
        }
        return ImportLanes(numbers: numbers, store: store, entity: entity, policy: policy, job: job, savedBy: name, interrupter: interrupter)
    }

    /// A new save's change record, for a batch started on a lane.
    package func newSaveChanges() -> SaveChanges {
        core.newSaveChanges()
    }

    /// A batch a lane committed, as this context's save: its `SaveResult`, its `DidSave` posted.
    package func saved(_ save: ImportLanes.Save) -> SaveResult {
        core.saved(save.changes, sequence: save.sequence, ruleEffects: save.ruleEffects, began: save.began)
    }

    /// Hot swap: one save deletes every row of the importer's entity, then writes what `feed`
    /// hands to its `write` (a batch and its layouts' columns); readers see the old rows or the
    /// new ones, never a mix. `checkpoint` is in the same transaction.
    package func replaceAll(with importer: inout RowImporter, records: inout ConflictRecords, checkpoint: CheckpointWrite?,
                    _ feed: (_ write: (RowBatch, [[Column]]) throws -> Void) throws -> Void) throws -> SaveResult {
        try commit(checkpoint: checkpoint) { db, changes in
            try importer.deleteAll(in: db, changes: &changes)
            try feed { batch, columns in
                try importer.write(batch, columns: columns, in: db, changes: &changes, records: &records)
            }
        }.result
    }

    /// True when an import may read its batches' stored rows ahead from a snapshot: outside
    /// `atomically` (a snapshot does not see its uncommitted writes), on a store whose writers
    /// lock the whole store (where they lock only their rows, others may change them at any time).
    package var canReadAhead: Bool { !isAtomic && store.hasStoreWideWriteLock }

    /// `batch`'s stored rows, read from a snapshot off the context's queue (on the feed's
    /// thread); nil when the read fails (the import reads them in its save).
    package nonisolated func readAhead(_ batch: RowBatch, columns: [[Column]], of entity: Entity) -> PrefetchedRows? {
        PrefetchedRows.read(for: batch, columns: columns, of: entity, store: store)
    }
}
