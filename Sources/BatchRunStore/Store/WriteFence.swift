/// A condition every write transaction of a store must still meet as it commits: a statement
/// run as the transaction's last, which must return a row. When it returns none, the
/// transaction is rolled back and the write fails (`StoreError.fenced`). A queue worker's run is
/// fenced by its lease's token, so a worker that lost its item (paused, cut off, taken over)
/// cannot commit another batch. PostgreSQL stores only.
///
/// Made by the queue (`PostgresQueue.fence(item:token:idleTimeout:)`):
///
/// ```swift
/// let fence = PostgresQueue.fence(item: 7, token: 3, idleTimeout: 30)
/// let store = try Store(postgres: url, model: model, fence: fence)
/// ```
package struct WriteFence: Sendable {
    /// The statement; `?` placeholders take `arguments`.
    package var sql: String
    package var arguments: [StoreValue]
    /// What the failed write says.
    package var refusal: String
    /// A transaction idle longer than this (its process paused mid-batch) is ended by the
    /// server, so the rows it locked are free for whoever took the work over.
    package var idleTimeout: Double?

    package init(sql: String, arguments: [StoreValue], refusal: String, idleTimeout: Double? = nil) {
        self.sql = sql
        self.arguments = arguments
        self.refusal = refusal
        self.idleTimeout = idleTimeout
    }
}
