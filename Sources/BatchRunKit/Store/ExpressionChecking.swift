/// Prepares a user's expression, inside a probe statement, against the declared tables before
/// any store is touched: a mistake or anything unsafe is found at load time, with its offset.
/// SQLite's (`ExpressionChecker`) works on an empty in-memory copy of the model; PostgreSQL's
/// (`PostgresExpressionChecker`) on the server, in a transaction it rolls back. A store's
/// `StoreSpec.makeExpressionChecker(model:)` gives the one its database reads expressions as.
///
/// ```swift
/// let checker = try StoreSpec(location: "var/nightly.sqlite").makeExpressionChecker(model: model)
/// checker.check(sql: "SELECT 1 FROM \"Session\" WHERE status = :wanted")   // .success(["wanted"])
/// ```
protocol ExpressionChecking: AnyObject {
    /// Prepares one statement; on success, its `:name` placeholders in order of first use.
    func check(sql: String) -> Result<[String], ExpressionProblem>
    /// Why the checker stopped checking on the server (its session failed midway); from then
    /// on `check` checks only what needs no server. Nil while it checks everything.
    var unavailable: String? { get }
}
