#if PostgreSQL
import BatchRunStore
import Foundation

/// Checks expressions on a PostgreSQL server, in PostgreSQL's dialect: each probe statement is
/// prepared in a transaction that holds the declared tables as empty temporary tables (they
/// hide any table of the same name, and exist even before the first run created the real
/// ones), is read-only from then on, and is rolled back. The statement's generic plan then
/// shows what it would do: reading a table that is not declared, writing or locking rows is
/// refused, and so are functions that reach outside the database (files, other servers, large
/// objects, server settings, SQL run from text), found by name in the expression's text.
///
/// ```swift
/// let checker = try PostgresExpressionChecker(url: "postgresql://batch@db.internal/nightly", model: model)
/// checker.check(sql: "SELECT 1 FROM session WHERE started_at < now() - interval '1 day'")   // .success([])
/// checker.check(sql: "SELECT pg_read_file('/etc/passwd')")                                   // .failure(... offset 7)
/// ```
final class PostgresExpressionChecker: ExpressionChecking {
    package typealias Problem = ExpressionProblem

    private let connection: PostgresStoreConnection
    private let location: PostgresLocation
    private let temporaryTables: [String]
    package private(set) var unavailable: String?

    /// Connects to the server; throws when it cannot be reached (`StoreError.cannotOpen`).
    package init(url: String, model: Model) throws {
        let location = try PostgresLocation(url: url)
        self.location = location
        do {
            connection = try PostgresBackend.connect(location)
        } catch {
            throw StoreError.cannotOpen(path: location.description, reason: PostgresBackend.describe(error, location: location))
        }
        temporaryTables = model.entities.map { entity in
            PostgresSchemaSQL.definition.createTable(entity)
                .replacingOccurrences(of: "CREATE TABLE IF NOT EXISTS", with: "CREATE TEMPORARY TABLE")
        }
    }

    deinit {
        try? connection.connection.close().wait()
    }

    /// Functions an expression may not call: they read or write files, reach other servers,
    /// touch large objects or server settings, signal other sessions, or run SQL given as text.
    private let refusedFunction = try! Regex(
        #"(?i)\b(pg_read_file|pg_read_binary_file|pg_ls_\w+|pg_stat_file|pg_file_\w+|lo_\w+|loread|lowrite|dblink\w*|"#
        + #"set_config|current_setting|pg_reload_conf|pg_rotate_logfile|pg_terminate_backend|pg_cancel_backend|pg_sleep\w*|"#
        + #"pg_advisory\w*|pg_notify|query_to_xml\w*|table_to_xml\w*|cursor_to_xml\w*|schema_to_xml\w*|database_to_xml\w*|"#
        + #"pg_logical_\w+|pg_replication_\w+|pg_create_\w+|pg_drop_\w+|txid_\w+|pg_current_\w+|nextval|setval)\s*\("#)

    package func check(sql: String) -> Result<[String], Problem> {
        if let offset = PostgresExpressionChecker.statementSeparatorOffset(in: sql) {
            return .failure(Problem(message: "only one expression is allowed, found ';' starting a second statement", offset: offset))
        }
        let text = PostgresPlaceholders(sql, keepingOffsets: true)
        var names: [String] = []
        for parameter in text.parameters {
            guard case .name(let name) = parameter else {
                return .failure(Problem(message: "use named placeholders like :name, not '?'", offset: nil))
            }
            names.append(name)
        }
        if let match = sql.firstMatch(of: refusedFunction) {
            let name = String(match.output[1].substring ?? "")
            return .failure(Problem(message: "function \(name) reaches outside the database and is not allowed in expressions",
                                    offset: sql.utf8.distance(from: sql.startIndex, to: match.range.lowerBound)))
        }
        // The session is gone: what is left is checked without the server.
        if unavailable != nil { return .success(names) }
        do {
            try connection.simple("BEGIN")
            defer {
                // A prepared statement outlives its transaction.
                try? connection.simple("ROLLBACK")
                try? connection.simple("DEALLOCATE ALL")
            }
            for table in temporaryTables { try connection.simple(table) }
            try connection.simple("SET TRANSACTION READ ONLY")
            try connection.simple("SET LOCAL plan_cache_mode = force_generic_plan")
            let prefix = "PREPARE _batchrun_check AS "
            do {
                try connection.simple(prefix + text.sql)
            } catch let error as PostgresError where !error.isServerFailure {
                let offset = error.position.flatMap { Self.utf8Offset(ofCharacter: $0 - 1 - prefix.count, in: sql) }
                return .failure(Problem(message: error.message, offset: offset))
            }
            let arguments = Array(repeating: "NULL", count: text.parameters.count).joined(separator: ", ")
            let plan = try connection.query("EXPLAIN (VERBOSE, FORMAT JSON) EXECUTE _batchrun_check"
                                            + (arguments.isEmpty ? "" : "(\(arguments))"), [])
            guard case .text(let json)? = plan.values.first?.first,
                  let document = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]],
                  let root = document.first?["Plan"] as? [String: Any] else {
                return .failure(Problem(message: "the server gave no plan for this expression", offset: nil))
            }
            if let refusal = Self.refusal(in: root, sql: sql) { return .failure(refusal) }
            return .success(names)
        } catch let error as PostgresError where error.isServerFailure {
            unavailable = PostgresBackend.describe(error, location: location)
            return .success(names)
        } catch {
            return .failure(Problem(message: "\(error)", offset: nil))
        }
    }

    /// The first thing in a plan an expression may not do: write, lock rows, or read a table
    /// other than the declared ones (the temporary tables).
    private static func refusal(in node: [String: Any], sql: String) -> Problem? {
        switch node["Node Type"] as? String {
        case "ModifyTable"?:
            return Problem(message: "expressions may not write (\((node["Operation"] as? String ?? "").lowercased()))", offset: nil)
        case "LockRows"?:
            return Problem(message: "expressions may not lock rows (FOR UPDATE, FOR SHARE)", offset: nil)
        default:
            break
        }
        if let relation = node["Relation Name"] as? String, let schema = node["Schema"] as? String, !schema.hasPrefix("pg_temp") {
            let offset = sql.range(of: relation, options: .caseInsensitive).map { sql.utf8.distance(from: sql.startIndex, to: $0.lowerBound) }
            return Problem(message: "table \(schema).\(relation) is not declared in this job file; expressions may read declared tables only",
                           offset: offset)
        }
        for child in node["Plans"] as? [[String: Any]] ?? [] {
            if let refusal = refusal(in: child, sql: sql) { return refusal }
        }
        return nil
    }

    /// The UTF-8 offset of the `character`th character (from 0) of `text`; PostgreSQL counts
    /// positions in characters.
    private static func utf8Offset(ofCharacter character: Int, in text: String) -> Int? {
        guard character >= 0 else { return nil }
        let scalars = text.unicodeScalars
        guard let index = scalars.index(scalars.startIndex, offsetBy: character, limitedBy: scalars.endIndex) else { return nil }
        return text.utf8.distance(from: text.startIndex, to: index)
    }
}
#endif
