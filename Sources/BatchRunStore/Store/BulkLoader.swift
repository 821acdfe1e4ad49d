/// Writes of many rows at once, as the store's database does them fastest: on SQLite,
/// multi-row `INSERT` statements prepared once per shape and bound from the batch's cells; on
/// PostgreSQL, `COPY` or one `INSERT ... SELECT FROM unnest(...)` of column arrays. The one
/// bulk path of each backend: an import's insert step and a context's save of new objects
/// (`ObjectInserter`) both write through it. One loader serves one entity, call after call, on
/// whichever connection each call's transaction has.
///
/// Every call is all or nothing: when a row is refused (a key or unique value taken, a NOT
/// NULL or CHECK constraint, a value of the wrong type), nothing of that call is written and
/// the outcome says why, so the caller can go row by row; an interrupt or a busy, full or
/// read-only store throws.
///
/// ```swift
/// let loader = store.backend.makeBulkLoader(for: entity)
/// let size = loader.nextChunk(rows.count, columns: columns.count)
/// let (outcome, keys) = try loader.insert(rows.prefix(size), of: batch, layout: 0, columns: columns,
///                                         assigningKeys: false, in: connection)
/// ```
package protocol BulkLoader: AnyObject {
    /// How many of `remaining` rows of `columns` values the next call takes.
    func nextChunk(_ remaining: Int, columns: Int) -> Int

    /// Inserts `rows` of `batch` (all of feed layout `layout`, whose cells fill `columns`).
    /// With `assigningKeys` (an integer key the rows leave out or give as NULL), the keys the
    /// store assigned come back in row order.
    func insert(_ rows: ArraySlice<Int>, of batch: RowBatch, layout: Int, columns: [String], assigningKeys: Bool,
                in connection: any StoreConnection) throws -> (outcome: StatementOutcome, keys: [Int64])

    /// As `insert` (keys given or left to the store), each row coming back to `returned` as
    /// stored: every column of the entity, in its order, defaults and assigned keys included,
    /// in no particular row order. Nothing comes back when the outcome is not `.done`.
    func insertReturningRows(_ rows: ArraySlice<Int>, of batch: RowBatch, layout: Int, columns: [String],
                             in connection: any StoreConnection, returned: ([StoreValue]) -> Void) throws -> StatementOutcome

    /// The batch after the one about to be written brings `rows` rows (known when the feed is
    /// read ahead): a loader may prepare for them while this batch loads (PostgreSQL draws
    /// their keys on another session).
    func expectNext(rows: Int)

    /// `count` keys for rows to come, drawn now, in order, outside any transaction (the
    /// integer key's sequence on PostgreSQL): an import lane's batch gets its keys this way when
    /// it is started, so that keys rise in feed order whichever lane writes first
    /// (`ImportLanes`). Never called on SQLite, which has no lanes.
    func drawKeys(_ count: Int) throws -> [Int64]

    /// From now on, keys for rows that leave them out come from `keys` alone (drawn by
    /// `drawKeys`), or, nil, as usual. A call that would need others, or leave them to the
    /// store, throws `KeysNotGiven` instead.
    func useKeys(_ keys: [Int64]?)

    /// Writes `rows` whose (one-column) keys, `keys`, are taken, as a merge policy resolves
    /// them: see `BulkResolution`.
    func resolve(_ rows: [Int], keys: [StoreValue], of batch: RowBatch, layout: Int, columns: [String],
                 as resolution: BulkResolution, in connection: any StoreConnection) throws -> StatementOutcome
}

/// How rows whose keys are taken are written.
package enum BulkResolution {
    /// Every fed column takes our value (object-trump, recompute).
    case ours
    /// A column takes our value only where the stored one is NULL (store-trump).
    case fillNulls
    /// The stored row is replaced whole; columns the feed leaves out take their defaults (overwrite).
    case replace
}

/// A bulk call that needed keys it was not given (`BulkLoader.useKeys`): an import lane's batch
/// that must be written on the writer, where keys are drawn as it goes. The import catches it;
/// it reaches no user.
package struct KeysNotGiven: BatchRunError {
    package var code: String { "store.keys-not-given" }
    package var message: String { "the rows needed keys drawn as they are written, in feed order" }
    package var description: String { message }

    package init() {}
}
