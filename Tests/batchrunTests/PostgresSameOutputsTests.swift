import Foundation
import Testing
import TestSupport

/// The same job files run by the binary on SQLite and on PostgreSQL write the same outputs:
/// every file, every cell. Params keep their type on both backends: a fetch's real output
/// compared with an integer column compares numbers (on PostgreSQL it was bound as text, which
/// the server read as the column's bigint and refused: `invalid input syntax for type bigint`).
@Suite("PostgreSQL and SQLite write the same outputs")
struct PostgresSameOutputsTests {
    /// A flights feed shaped like real data: integer delays (some missing), real distances.
    static func flightsFeed(rows: Int) -> String {
        var feed = "id,carrier,dep_delay,arr_delay,distance\n"
        let carriers = ["AA", "DL", "UA", "WN", "B6"]
        for id in 1...rows {
            let arrival = id % 17 == 0 ? "NA" : String((id * 7919) % 181 - 40)
            let departure = id % 23 == 0 ? "" : String((id * 104_729) % 97 - 15)
            feed += "\(id),\(carriers[id % carriers.count]),\(departure),\(arrival),\(Double((id * 31) % 2_700 + 80) + 0.5)\n"
        }
        return feed
    }

    /// A fetch's averages passed downstream into comparisons with integer columns (a
    /// fetch, a batch-update and a delete), a real file param with no fraction (`60.0`), and
    /// `--param` values: every output written to `out/`.
    static let flightsJob = """
        version: 1
        store: store.sqlite
        entities:
          Flight:
            columns:
              id: integer primary key
              carrier: text not null
              dep_delay: integer
              arr_delay: integer
              distance: real
              status: text not null default 'scheduled'
        params:
          cap: 60.0
          slack: 2.5
        jobs:
          load:
            steps:
              - insert: { entity: Flight, from: flights.csv, nulls: ["", "NA"], batch_size: 700 }
          overall:
            needs: load
            steps:
              - fetch:
                  entity: Flight
                  select: { flights: "count(*)", avg_delay: "avg(arr_delay)", total_delay: "sum(arr_delay)",
                            avg_departure: "avg(dep_delay)", longest: "max(distance)" }
                  where: "arr_delay IS NOT NULL"
                  as: overall
                  output: out/overall.json
          late:
            needs: overall
            steps:
              - fetch:
                  entity: Flight
                  select: [id, carrier, arr_delay]
                  where: "arr_delay > :avg AND arr_delay < :cap"
                  params: { avg: "${overall.avg_delay}" }
                  order_by: [id]
                  output: out/late.csv
          flag:
            needs: overall
            steps:
              - batch-update:
                  entity: Flight
                  where: "arr_delay - :slack > :avg AND dep_delay < :departure"
                  set: { status: "'late'" }
                  params: { avg: "${overall.avg_delay}", departure: "${overall.avg_departure}" }
                  batch_size: 300
          purge:
            needs: flag
            steps:
              - delete: { entity: Flight, where: "distance < :short AND arr_delay <= :avg", params: { avg: "${overall.avg_delay}" } }
          summary:
            needs: purge
            steps:
              - fetch:
                  entity: Flight
                  select: { status: status, flights: "count(*)", delay: "sum(arr_delay)", above: "sum(CASE WHEN arr_delay > :avg THEN 1 ELSE 0 END)" }
                  params: { avg: "${overall.avg_delay}" }
                  group_by: [status]
                  order_by: [status]
                  output: out/summary.csv
              - fetch:
                  entity: Flight
                  select: [id, carrier, dep_delay, arr_delay, distance, status]
                  where: "dep_delay >= :min_departure"
                  order_by: [id]
                  output: out/flights.ndjson
        """

    /// Runs `arguments` (job files first) in a fresh copy of jobs/ and examples/ holding
    /// `flights.csv` and `flights.yaml`, on `store`, one job at a time: the folder and the
    /// reports' outcome lines.
    func run(_ arguments: [String], store: String) throws -> (TemporaryFolder, [String]) {
        let folder = try TemporaryFolder()
        try folder.copyFromPackage("jobs")
        try folder.copyFromPackage("examples")
        try folder.write("flights.csv", Self.flightsFeed(rows: 5_000))
        try folder.write("flights.yaml", Self.flightsJob)
        // Several job files write one report each into a folder; one writes a file.
        let files = arguments.filter { $0.hasSuffix(".yaml") }.count
        let result = try Batchrun.run(arguments + ["--store", store, "--jobs", "1", "--report", files > 1 ? "reports" : "reports/run.json"],
                                      in: folder.url)
        #expect(result.status == 0, "\(arguments) on \(store): \(result.stdout)\(result.stderr)")
        var outcome: [String] = []
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder.path("reports")))?.sorted() ?? [] where name.hasSuffix(".json") {
            let report = try folder.json("reports/\(name)")
            for job in report["jobs"] as? [[String: Any]] ?? [] {
                let rows = (job["rows"] as? [String: Int] ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
                outcome.append("\(name) \(job["name"] ?? "") \(job["status"] ?? "") \(rows.joined(separator: " ")) conflicts=\(job["conflicts"] ?? 0)")
            }
        }
        return (folder, outcome)
    }

    /// A file's text with every number that has a fraction written to 12 significant digits:
    /// an average summed in another order may differ in its last bits.
    static func normalized(_ text: String) -> String {
        text.replacing(/-?[0-9]+\.[0-9]+(?:[eE][-+]?[0-9]+)?/) { match in
            String(format: "%.12g", Double(match.output) ?? .nan)
        }
    }

    @Test("the examples and a flights job with typed params: the same outputs, rows and statuses on both backends")
    func sameOutputs() throws {
        let runs: [(arguments: [String], outputs: [String], orderedColumnOnly: Bool)] = [
            (["flights.yaml", "--param", "short=900", "--param", "min_departure=40"],
             ["out/overall.json", "out/late.csv", "out/summary.csv", "out/flights.ndjson"], false),
            (["examples/queue/import_sessions.yaml", "examples/queue/close_stale.yaml", "examples/queue/stats.yaml",
              "--param", "cutoff=2023-06-01"], ["examples/queue/stats.csv"], false),
            (["examples/import_feeds.yaml"], [], false),
            // longest.csv: the 20 longest sessions; sessions of equal duration come in either
            // order and tie at the limit, so only the ordered column (duration) is compared.
            (["jobs/nightly.yaml"], ["reports/longest.csv"], true),
        ]
        for (arguments, outputs, orderedColumnOnly) in runs {
            let (sqlite, sqliteOutcome) = try run(arguments, store: "store.sqlite")
            let (postgres, postgresOutcome) = try run(arguments, store: try PostgresServer.database("same"))
            #expect(!sqliteOutcome.isEmpty)
            #expect(postgresOutcome == sqliteOutcome, "\(arguments[0])")
            for output in outputs {
                var expected = Self.normalized(try String(contentsOfFile: sqlite.path(output), encoding: .utf8))
                var written = Self.normalized(try String(contentsOfFile: postgres.path(output), encoding: .utf8))
                if orderedColumnOnly {
                    expected = expected.split(separator: "\n").map { $0.split(separator: ",").last ?? "" }.joined(separator: "\n")
                    written = written.split(separator: "\n").map { $0.split(separator: ",").last ?? "" }.joined(separator: "\n")
                }
                #expect(written == expected, "\(arguments[0]): \(output)")
                #expect(expected.split(separator: "\n").count > 2, "\(output) is nearly empty")
            }
        }
    }

    @Test("a real param compared with an integer column on PostgreSQL: numbers compared, no bigint parse error")
    func realParamAgainstIntegerColumn() throws {
        let (folder, _) = try run(["flights.yaml", "--param", "short=900", "--param", "min_departure=40.5"],
                                  store: try PostgresServer.database("typed"))
        // Whole-number and fractional reals from the file, the fetch and --param were all compared.
        let late = try String(contentsOfFile: folder.path("out/late.csv"), encoding: .utf8).split(separator: "\n").dropFirst()
        let average = try #require((try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder.path("out/overall.json"))))
                                    as? [[String: Any]])?.first?["avg_delay"] as? Double)
        #expect(average != average.rounded())
        #expect(!late.isEmpty)
        for line in late {
            let delay = try #require(Double(line.split(separator: ",").last.map(String.init) ?? ""))
            #expect(delay > average && delay < 60)
        }
    }

    /// Runs `job` on `store` in a new folder; the text of its `out/` file `output`.
    func output(of job: String, _ output: String, store: String) throws -> String {
        let folder = try TemporaryFolder()
        try folder.write("job.yaml", job)
        let result = try Batchrun.run(["job.yaml", "--store", store], in: folder.url)
        #expect(result.status == 0, "\(store): \(result.stdout)\(result.stderr)")
        return try String(contentsOfFile: folder.path(output), encoding: .utf8)
    }

    @Test("a date a fetch computes is written as SQLite's date() writes it on both backends; on PostgreSQL a time, JSON and a UUID as their text")
    func computedValuesAsText() throws {
        // A date was written as its 4 binary bytes on PostgreSQL (`\0\0&d`), found by running docs/feeds.md's example.
        let job = """
            version: 1
            store: store.sqlite
            entities:
              Event: { columns: { id: integer primary key, at: datetime not null } }
            jobs:
              load:
                steps:
                  - insert: { entity: Event, rows: [{ id: 1, at: "2026-11-28T10:05:00Z" }, { id: 2, at: "1999-12-31T23:59:59Z" },
                                                    { id: 3, at: "2024-02-29T00:00:00.25Z" }, { id: 4, at: "1970-01-01T00:00:00Z" }] }
              days:
                needs: load
                steps:
                  - fetch: { entity: Event, select: { id: id, day: "date(at)" }, order_by: [id], output: out/days.csv }
            """
        let expected = "id,day\n1,2026-11-28\n2,1999-12-31\n3,2024-02-29\n4,1970-01-01\n"
        #expect(try output(of: job, "out/days.csv", store: "store.sqlite") == expected)
        let database = try PostgresServer.database("dates")
        #expect(try output(of: job, "out/days.csv", store: database) == expected)

        let postgresOnly = job.replacingOccurrences(of: "select: { id: id, day: \"date(at)\" }", with: """
            select: { id: id, t: "CAST(at AS time)", j: "CAST('[1, 2]' AS json)", b: "CAST('{\\"a\\": 1}' AS jsonb)", u: "CAST('A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11' AS uuid)", never: "CAST('infinity' AS date)", ever: "CAST('-infinity' AS date)", o: "CAST(1259 AS oid)" }
            """)
        #expect(postgresOnly != job)
        let written = try output(of: postgresOnly, "out/days.csv", store: try PostgresServer.database("types"))
        #expect(written.split(separator: "\n").map(String.init) == [
            "id,t,j,b,u,never,ever,o",
            "1,10:05:00,\"[1, 2]\",\"{\"\"a\"\": 1}\",a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11,infinity,-infinity,1259",
            "2,23:59:59,\"[1, 2]\",\"{\"\"a\"\": 1}\",a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11,infinity,-infinity,1259",
            "3,00:00:00.25,\"[1, 2]\",\"{\"\"a\"\": 1}\",a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11,infinity,-infinity,1259",
            "4,00:00:00,\"[1, 2]\",\"{\"\"a\"\": 1}\",a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11,infinity,-infinity,1259",
        ], "\(written)")
    }

    @Test("intervals and times with a zone a fetch computes on PostgreSQL are written as the server writes them as text")
    func intervalsAndZonedTimesAsText() throws {
        let expressions = ["CAST('1 year 2 mons 3 days 04:05:06.5' AS interval)", "CAST('-1 days +02:00:00' AS interval)",
                           "CAST('0' AS interval)", "CAST('-14 mons -3 days -00:00:00.000001' AS interval)", "CAST('100:00:00' AS interval)",
                           "CAST('1 mon -1 days' AS interval)", "CAST('10:05:00+02' AS timetz)", "CAST('23:59:59.5-03:30' AS timetz)",
                           "CAST('00:00:00+00' AS timetz)", "CAST('12:00:00-00:00:30' AS timetz)"]
        let names = expressions.indices.map { "v\($0)" }
        let select = zip(names, expressions).map { "\($0): \"\($1)\"" }.joined(separator: ", ")
        let job = """
            version: 1
            store: store.sqlite
            entities:
              One: { columns: { id: integer primary key } }
            jobs:
              load:
                steps:
                  - insert: { entity: One, rows: [{ id: 1 }] }
              values:
                needs: load
                steps:
                  - fetch: { entity: One, select: { \(select) }, output: out/values.json }
            """
        let database = try PostgresServer.database("intervals")
        let written = try JSONSerialization.jsonObject(with: Data(try output(of: job, "out/values.json", store: database).utf8)) as? [[String: Any]]
        let row = try #require(written?.first)
        for (name, expression) in zip(names, expressions) {
            let server = try PostgresServer.psql(database, "SELECT CAST(\(expression) AS text)")
            #expect(row[name] as? String == server, "\(expression): \(row[name] ?? "none") against the server's \(server)")
        }
    }
}
