@_spi(BatchRunPackage) import BatchRunStore

/// A batch's stored rows read ahead, on the feed's thread from a snapshot of the store, while
/// the writer writes the batch before: a conflict-heavy import's lookups leave the writer's
/// core. The writer uses them only when nothing has committed since but its own batches, none
/// of whose keys fall in this batch's range (`RowImporter.isCurrent`); otherwise it reads again.
///
/// ```swift
/// let ahead = context.readAhead(batch, columns: layouts.map(\.columns), of: entity)   // feed's thread
/// ```
package struct PrefetchedRows: Sendable {
    package var rows: StoredRows
    /// The store's change generation before the snapshot was read.
    package var generation: UInt64
    /// The range of the batch's keys (nil: some row has no integer key).
    package var span: ClosedRange<Int64>?

    /// Reads `batch`'s stored rows on a reader of `store`; nil when the read fails (the writer reads).
    /// `columns`: per layout, the columns its cells fill.
    package static func read(for batch: RowBatch, columns: [[Column]], of entity: Entity, store: Store) -> PrefetchedRows? {
        let keyPositions = StoredRows.keyPositions(in: columns, of: entity)
        let generation = store.backend.changeGeneration
        guard let rows = try? store.backend.read(interruptedBy: nil, { db in
            try StoredRows.lookUp(batch, keyPositions: keyPositions, of: entity, in: db)
        }) else { return nil }
        return PrefetchedRows(rows: rows, generation: generation, span: StoredRows.keySpan(of: batch, keyPositions: keyPositions))
    }
}
