@_spi(BatchRunPackage) import BatchRunStore

/// Record inserts waiting for their save as rows, not objects: every record of one entity that
/// gives the same columns, its key among them, typed into one `RowBatch` as it is inserted. A
/// save binds its multi-row INSERTs straight from the batch: no object and no row array per
/// record (they cost about 2,600 of a record insert's 14,300 instructions). Nothing outside the
/// context can hold such a row, so an object is made for it only when the context is asked for
/// objects (`objects(_:)`: its pending inserts looked up, its registered objects listed, a save
/// resolving a collision), the same object the insert made before.
///
/// ```swift
/// var rows = PendingRecordRows(entity: reading, columns: [0, 1, 2])
/// rows.append(encoder.values)    // the record's row, in column order
/// rows.id(of: 0)                 // Reading(1)
/// ```
struct PendingRecordRows {
    package let entity: Entity
    /// The columns every row gives, sorted (the primary key's among them).
    package let columns: [Int]
    /// The given columns' values, row after row.
    package private(set) var batch: RowBatch
    /// Where each primary-key column sits among `columns`.
    private let keyCells: [Int]

    /// `reusing`: an emptied batch of an earlier save, whose room the rows fill again.
    package init(entity: Entity, columns: [Int], reusing spare: RowBatch? = nil) {
        self.entity = entity
        self.columns = columns
        batch = spare ?? RowBatch()
        batch.removeAll()
        keyCells = entity.primaryKeyIndexes.compactMap { columns.firstIndex(of: $0) }
    }

    package var count: Int { batch.count }

    /// Adds a row: `values` in column order (a whole row; only `columns` are read).
    package mutating func append(_ values: [StoreValue]) {
        batch.beginRow(line: 0, layout: 0)
        values.withUnsafeBufferPointer { values in   // each value read in place, not copied out
            for column in columns { batch.append(values[column]) }
        }
    }

    /// The ID of row `row` (its key columns are never NULL).
    package func id(of row: Int) -> ObjectID {
        let first = row * columns.count
        if keyCells.count == 1 { return ObjectID(entity: entity.name, single: batch.value(at: first + keyCells[0])) }
        return ObjectID(entity: entity.name, key: keyCells.map { batch.value(at: first + $0) })
    }

    /// The inserted objects of `rows`, as `Context.insert(_ record:)` made them before.
    package func objects(_ rows: Range<Int>) -> [ManagedObject] {
        rows.map { row in
            var values = [StoreValue](repeating: .null, count: entity.columns.count)
            for (cell, column) in zip(batch.cells(of: row), columns) { values[column] = batch.value(at: cell) }
            return ManagedObject(inserting: entity, values: values, assigned: columns)
        }
    }
}
