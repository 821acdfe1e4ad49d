/// A condition every write transaction of a store must still meet as it commits: a statement
/// run as the transaction's last, which must return a row. When it returns none, the
/// transaction is rolled back and the write fails (`StoreError.fenced`). A queue worker's run is
/// fenced by its lease's token, so a worker that lost its item (paused, cut off, taken over)
/// cannot commit another batch. PostgreSQL stores only.
///
/// Made by the queue (`PostgresQueue.fence(item:token:)`); the run's store also ends a
/// transaction left idle past the lease (`StoreSpec.idleTimeout`), so a paused run's locks go:
///
/// ```swift
/// var spec = StoreSpec(location: url)
/// spec.idleTimeout = 30
/// let store = try Store(spec, model: model, fence: PostgresQueue.fence(item: 7, token: 3))
/// ```
package struct WriteFence: Sendable {
    /// The statement; `?` placeholders take `arguments`.
    package var sql: String
    package var arguments: [StoreValue]
    /// What the failed write says.
    package var refusal: String

    package init(sql: String, arguments: [StoreValue], refusal: String) {
        self.sql = sql
        self.arguments = arguments
        self.refusal = refusal
    }
}
