import Foundation
import Testing
import TestSupport

/// Imports into PostgreSQL go through `COPY ... FROM STDIN`, as the server's own statement log
/// shows: the code reaches PostgresNIO's connection channel by reflection and falls back to
/// `INSERT ... SELECT FROM unnest(...)` when it cannot, which would still import every row, only
/// four times slower; these tests fail on that fallback.
@Suite("PostgreSQL: imports take the COPY path")
struct PostgresCopyPathTests {
    static let rows = 1_200

    /// A job importing `feed.csv` into `Item` in batches of 500 (three batches).
    static func job(_ url: String, columns: String) -> String {
        """
        version: 1
        store: { postgres: "\(url)" }
        entities:
          Item: { columns: { \(columns) } }
        jobs:
          load:
            batch_size: 500
            steps:
              - insert: { entity: Item, from: feed.csv }
        """
    }

    /// The statements the server logged (`log_statement = 'all'`), one a line, without the prefix.
    static func statements(in cluster: PostgresServer.Cluster) throws -> [String] {
        try String(contentsOfFile: cluster.folder + "/server.log", encoding: .utf8)
            .split(separator: "\n")
            .compactMap { line in line.range(of: "statement: ").map { String(line[$0.upperBound...]) }
                ?? line.range(of: "execute <unnamed>: ").map { String(line[$0.upperBound...]) } }
    }

    @Test("an import with the feed's own keys and one with keys the server assigns: one COPY FROM STDIN a batch, no unnest INSERT, no savepoint around the COPY, every row")
    func importsCopy() throws {
        let cluster = try PostgresServer.start(settings: ["log_statement = 'all'"])
        defer { try? cluster.stop() }
        for (name, header, columns, line) in [
            ("given", "id,minutes", "id: integer primary key, minutes: integer not null", { (i: Int) in "\(i),\(i % 600)" }),
            ("assigned", "minutes,note", "id: integer primary key, minutes: integer not null, note: text", { (i: Int) in "\(i % 600),n\(i)" }),
        ] {
            let url = try cluster.database(name)
            let folder = try TemporaryFolder()
            try folder.write("feed.csv", header + "\n" + (1...Self.rows).map(line).joined(separator: "\n") + "\n")
            try folder.write("job.yaml", Self.job(url, columns: columns))
            let before = try Self.statements(in: cluster).count
            let result = try Batchrun.run(["job.yaml", "--quiet"], in: folder.url)
            #expect(result.status == 0, "\(name): \(result.stdout)\(result.stderr)")
            #expect(try PostgresServer.psql(url, "SELECT count(*) || ' ' || count(DISTINCT id) || ' ' || sum(minutes) FROM item")
                    == "\(Self.rows) \(Self.rows) \((1...Self.rows).reduce(0) { $0 + $1 % 600 })", "\(name)")
            let run = try Self.statements(in: cluster).dropFirst(before)
            let copies = run.filter { $0.hasPrefix("COPY \"item\"(") && $0.contains("FROM STDIN") }
            #expect(copies.count == 3, "\(name): \(run.joined(separator: "\n"))")
            #expect(!run.contains { $0.contains("unnest(") }, "\(name): an INSERT through unnest: \(run.joined(separator: "\n"))")
            // The keys' draw (assigned keys) or the check of the feed's keys (given keys) before the
            // COPY leaves no savepoint to take; given keys are read by a statement that does not
            // keep the transaction fresh, so their COPY may take one, sent without waiting.
            if name == "assigned" {
                #expect(!run.contains { $0.hasPrefix("SAVEPOINT batchrun_statement") }, "\(run.joined(separator: "\n"))")
                #expect(copies.allSatisfy { $0.contains("\"id\")") }, "the drawn keys go in with the rows: \(copies)")
            }
        }
    }
}
