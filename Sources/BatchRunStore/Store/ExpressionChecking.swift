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
package protocol ExpressionChecking: AnyObject {
    /// Prepares one statement; on success, its `:name` placeholders in order of first use.
    func check(sql: String) -> Result<[String], ExpressionProblem>
    /// Why the checker stopped checking on the server (its session failed midway); from then
    /// on `check` checks only what needs no server. Nil while it checks everything.
    var unavailable: String? { get }
}

extension ExpressionChecking {
    /// The byte offset of a `;` outside quotes and comments, if any.
    package static func statementSeparatorOffset(in sql: String) -> Int? {
        let bytes = Array(sql.utf8)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "'"), UInt8(ascii: "\""), UInt8(ascii: "`"), UInt8(ascii: "["):
                let close = byte == UInt8(ascii: "[") ? UInt8(ascii: "]") : byte
                index += 1
                while index < bytes.count && bytes[index] != close { index += 1 }
            case UInt8(ascii: "-") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "-"):
                while index < bytes.count && bytes[index] != UInt8(ascii: "\n") { index += 1 }
            case UInt8(ascii: "/") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "*"):
                index += 2
                while index + 1 < bytes.count && !(bytes[index] == UInt8(ascii: "*") && bytes[index + 1] == UInt8(ascii: "/")) { index += 1 }
                index += 1
            case UInt8(ascii: ";"):
                return index
            default:
                break
            }
            index += 1
        }
        return nil
    }
}
