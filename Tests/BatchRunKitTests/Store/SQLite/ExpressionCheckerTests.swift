import Testing
@testable import BatchRunKit
import BatchRunSQLite

@Suite("Expression authorizer")
struct ExpressionCheckerTests {
    static let model = Model(entities: [
        Entity(name: "Session", columns: [Column(name: "id", type: .integer, isPrimaryKey: true),
                                          Column(name: "user", type: .text)], primaryKey: ["id"]),
        Entity(name: "User", table: "users", columns: [Column(name: "name", type: .text, isPrimaryKey: true)], primaryKey: ["name"]),
    ])

    func check(_ sql: String) throws -> Result<[String], ExpressionChecker.Problem> {
        try ExpressionChecker(model: Self.model).check(sql: sql)
    }

    @Test("reads of declared entities, subqueries, CTEs and ordinary functions are allowed")
    func allowed() throws {
        #expect(try check("SELECT count(*) FROM Session WHERE user IN (SELECT name FROM users)") == .success([]))
        #expect(try check("WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 3) SELECT x FROM n") == .success([]))
        #expect(try check("SELECT upper(user), length(:a), :b FROM Session WHERE id > :a") == .success(["a", "b"]))
    }

    @Test("anything outside the declared entities or that writes is refused", arguments: [
        ("SELECT * FROM sqlite_master", "not 'sqlite_master'"),
        ("SELECT * FROM sqlite_schema", "not 'sqlite_master'"),
        ("SELECT * FROM pragma_table_info('Session')", "pragma"),
        ("SELECT load_extension('x')", "load_extension"),
        ("SELECT readfile('/etc/passwd')", "no such function"),
        ("PRAGMA journal_mode = DELETE", "PRAGMA is not allowed"),
        ("ATTACH DATABASE 'x.db' AS x", "ATTACH"),
        ("DELETE FROM Session", "would change"),
        ("UPDATE Session SET user = 'x'", "would change"),
        ("INSERT INTO Session (id) VALUES (1)", "would change"),
        ("DROP TABLE Session", "would change"),
        ("CREATE TABLE t (x)", "would change"),
        ("SELECT 1; DROP TABLE Session", "only one expression"),
        ("SELECT nope FROM Session", "no such column: nope"),
        ("SELECT * FROM Session WHERE id = ?", "named placeholders"),
        ("SELECT * FROM Session WHERE id = $x", "named placeholders"),
    ])
    func refused(sql: String, message: String) throws {
        guard case .failure(let problem) = try check(sql) else {
            Issue.record("\(sql) was allowed")
            return
        }
        #expect(problem.message.contains(message), "\(sql): \(problem.message)")
    }

    @Test("a ';' inside a string or comment is not a second statement")
    func separators() {
        #expect(ExpressionChecker.statementSeparatorOffset(in: "user = 'a;b' -- c;d") == nil)
        #expect(ExpressionChecker.statementSeparatorOffset(in: "\"we;ird\" = 1 /* ; */") == nil)
        #expect(ExpressionChecker.statementSeparatorOffset(in: "1; DROP") == 1)
    }
}
