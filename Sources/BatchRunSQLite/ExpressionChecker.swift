import BatchRunStore
import GRDBSQLite

/// Prepares user expressions against an empty in-memory copy of the model under a strict
/// authorizer, so that mistakes and anything unsafe are found before a store is touched.
///
/// Expressions may read the declared entities and call ordinary functions; they may not read
/// any other table (`sqlite_master`, `_batchrun_*`, pragma table-valued functions), attach
/// databases, run pragmas, write, or load extensions.
///
/// ```swift
/// let checker = try ExpressionChecker(model: model)
/// checker.check(sql: "SELECT count(*) FROM \"Session\" WHERE status = :wanted")  // .success([":wanted"])
/// checker.check(sql: "SELECT * FROM sqlite_master")                             // .failure(...)
/// ```
package final class ExpressionChecker: ExpressionChecking {
    package typealias Problem = ExpressionProblem

    private var connection: OpaquePointer?
    private let rules: AuthorizerRules

    package init(model: Model) throws {
        rules = AuthorizerRules(readableTables: model.readableTables)
        guard sqlite3_open_v2(":memory:", &connection, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK else {
            throw Problem(message: "cannot open an in-memory SQLite database", offset: nil)
        }
        for statement in SchemaSQL.statements(for: model) {
            var error: UnsafeMutablePointer<CChar>?
            if sqlite3_exec(connection, statement, nil, nil, &error) != SQLITE_OK {
                let message = error.map { String(cString: $0) } ?? "unknown error"
                sqlite3_free(error)
                throw Problem(message: message, offset: nil)
            }
        }
        let box = Unmanaged.passUnretained(rules).toOpaque()
        sqlite3_set_authorizer(connection, authorize, box)
    }

    /// Never: the in-memory database is always there.
    package var unavailable: String? { nil }

    deinit {
        sqlite3_close_v2(connection)
    }

    /// Prepares one statement; on success returns its `:name` placeholders in order of first use.
    package func check(sql: String) -> Result<[String], Problem> {
        if let offset = Self.statementSeparatorOffset(in: sql) {
            return .failure(Problem(message: "only one expression is allowed, found ';' starting a second statement", offset: offset))
        }
        rules.denial = nil
        var statement: OpaquePointer?
        var tail: UnsafePointer<CChar>?
        let code = sql.withCString { text in
            let code = sqlite3_prepare_v2(connection, text, -1, &statement, &tail)
            if code == SQLITE_OK, let tail, tail.pointee != 0, !String(cString: tail).allSatisfy(\.isWhitespace) {
                return SQLITE_MISUSE
            }
            return code
        }
        defer { sqlite3_finalize(statement) }
        if code == SQLITE_MISUSE {
            return .failure(Problem(message: "only one expression is allowed", offset: nil))
        }
        if code != SQLITE_OK {
            if var denial = rules.denial {
                // A pragma table-valued function shows up to the authorizer as a schema change.
                if sql.lowercased().contains("pragma_") && !denial.hasPrefix("pragma") {
                    denial = "pragma functions and SQLite's internal tables are not allowed in expressions"
                }
                return .failure(Problem(message: denial, offset: nil))
            }
            let offset = Int(sqlite3_error_offset(connection))
            return .failure(Problem(message: String(cString: sqlite3_errmsg(connection)), offset: offset >= 0 ? offset : nil))
        }
        var names: [String] = []
        let count = sqlite3_bind_parameter_count(statement)
        if count > 0 {
            for index in 1...count {
                guard let raw = sqlite3_bind_parameter_name(statement, index) else {
                    return .failure(Problem(message: "use named placeholders like :name, not '?'", offset: nil))
                }
                let name = String(cString: raw)
                guard name.hasPrefix(":") else {
                    return .failure(Problem(message: "use named placeholders like :name, not '\(name)'", offset: nil))
                }
                names.append(String(name.dropFirst()))
            }
        }
        return .success(names)
    }
}

/// What the authorizer allows; a class so the C callback can reach it through a pointer.
final class AuthorizerRules {
    package let readableTables: Set<String>
    /// The reason for the last refusal, read right after `sqlite3_prepare_v2`.
    var denial: String?

    /// Functions that reach outside the database.
    static let forbiddenFunctions: Set<String> = [
        "load_extension", "readfile", "writefile", "edit", "fts3_tokenizer", "zipfile", "sqlar_compress",
        "sqlar_uncompress", "sqlite_dbpage",
    ]

    package init(readableTables: Set<String>) {
        self.readableTables = readableTables
    }

    func decide(action: Int32, first: String?, second: String?) -> Int32 {
        switch action {
        case SQLITE_SELECT, SQLITE_RECURSIVE:
            return SQLITE_OK
        case SQLITE_READ:
            let table = first ?? ""
            if readableTables.contains(table.lowercased()) { return SQLITE_OK }
            denial = table.lowercased().hasPrefix("pragma_")
                ? "pragma functions are not allowed in expressions (\(table))"
                : "expressions may read declared entities only, not '\(table)'"
            return SQLITE_DENY
        case SQLITE_FUNCTION:
            let name = (second ?? "").lowercased()
            if Self.forbiddenFunctions.contains(name) {
                denial = "function \(name)() is not allowed in expressions"
                return SQLITE_DENY
            }
            return SQLITE_OK
        case SQLITE_PRAGMA:
            denial = "PRAGMA is not allowed in expressions"
        case SQLITE_ATTACH, SQLITE_DETACH:
            denial = "ATTACH and DETACH are not allowed in expressions"
        default:
            denial = "expressions may only read; this one would change the database"
        }
        return SQLITE_DENY
    }
}

private func authorize(_ box: UnsafeMutableRawPointer?, _ action: Int32, _ first: UnsafePointer<CChar>?,
                       _ second: UnsafePointer<CChar>?, _ database: UnsafePointer<CChar>?,
                       _ trigger: UnsafePointer<CChar>?) -> Int32 {
    guard let box else { return SQLITE_DENY }
    let rules = Unmanaged<AuthorizerRules>.fromOpaque(box).takeUnretainedValue()
    return rules.decide(action: action, first: first.map { String(cString: $0) },
                        second: second.map { String(cString: $0) })
}
