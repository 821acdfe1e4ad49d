import Foundation
import Testing
import TestSupport

/// An insert step under `merge_policy: overwrite` whose rows take a unique value another row
/// holds: that row is deleted (its `on delete cascade` parts with it) and counted as deleted,
/// the real binary end to end on SQLite and PostgreSQL. Both ways an import meets it: a row
/// with a new key (the one-row path) and a row whose key is taken too (the set-based path).
@Suite("Overwrite of a unique value in a job file")
struct OverwriteUniqueRunTests {
    static let file = """
        version: 1
        store: var/shop.sqlite
        entities:
          Product:
            columns:
              id: integer primary key
              code: text unique
          Part:
            columns:
              id: integer primary key
              product_id: integer references Product on delete cascade
        jobs:
          load:
            steps:
              - insert: { entity: Product, rows: [{ id: 1, code: x }, { id: 3, code: z }, { id: 4, code: w }] }
              - insert: { entity: Part, rows: [{ id: 10, product_id: 1 }, { id: 12, product_id: 3 }, { id: 14, product_id: 4 }] }
          replace:
            needs: load
            merge_policy: overwrite
            steps:
              - insert: { entity: Product, rows: [{ id: 2, code: x }, { id: 3, code: w }] }
        """

    @Test("the rows holding the inserted rows' unique values are deleted with their parts and counted: inserted 1, updated 1, deleted 2", arguments: ["sqlite", "postgres"])
    func counts(_ kind: String) throws {
        let folder = try TemporaryFolder()
        try folder.write("shop.yaml", Self.file)
        let store = kind == "sqlite" ? "var/shop.sqlite" : try PostgresServer.database("owrun")
        let run = try Batchrun.run(["shop.yaml", "--store", store, "--jobs", "1", "--report", "r.json"], in: folder.url)
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        #expect(run.stdout.contains("replace ") && run.stdout.contains("[inserted 1 · updated 1 · deleted 2 · 2 conflicts"), "\(run.stdout)")
        let report = try folder.json("r.json")
        let jobs = report["jobs"] as! [[String: Any]]
        let replace = try #require(jobs.first { $0["name"] as? String == "replace" })
        let rows = replace["rows"] as? [String: Int] ?? [:]
        #expect(rows["inserted"] == 1 && rows["updated"] == 1 && rows["deleted"] == 2, "\(rows)")

        func count(_ sql: String) throws -> Int { try RelationshipRunTests.count(sql, store: store, in: folder) }
        #expect(try count("SELECT count(*) FROM product") == 2)
        #expect(try count("SELECT count(*) FROM product WHERE (id = 2 AND code = 'x') OR (id = 3 AND code = 'w')") == 2)
        #expect(try count("SELECT count(*) FROM part") == 1 && count("SELECT count(*) FROM part WHERE id = 12") == 1)
    }
}
