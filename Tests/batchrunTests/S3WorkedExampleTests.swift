import Foundation
import Testing
import TestSupport

/// The worked examples from an S3 prefix to the statistics job, as docs/feeds.md (one machine)
/// and docs/queue.md (a fan-out over workers) give them, run against moto and a throwaway
/// PostgreSQL: their job files and commands with the bucket, the database and the folder put
/// in, and a worker that stops once the queue is empty.
@Suite("docs' S3 worked examples, end to end", .serialized)
struct S3WorkedExampleTests {
    static let parts = 4
    static let eventsPerPart = 500
    static let days = ["2026-11-28", "2026-11-29", "2026-11-30"]

    /// Four gzipped parts of events in a new bucket, at its top (moto checks no signature of a
    /// listing whose prefix has a slash); the bucket.
    static func exportParts(_ moto: MotoServer, _ folder: TemporaryFolder) throws -> String {
        let bucket = try moto.bucket("exports")
        for part in 0..<parts {
            let events = (0..<eventsPerPart).map { index -> String in
                let id = part * eventsPerPart + index + 1
                return "\(id),\(id % 37),\(id % 2 == 0 ? "view" : "click"),\(days[id % days.count])T10:\(String(format: "%02d", index % 60)):00Z\n"
            }
            let name = String(format: "part-%03d.csv", part)
            try folder.write("export/\(name)", "id,user_id,kind,at\n" + events.joined())
            try CompressedFeedRunTests.program("gzip", ["-q", "-f", folder.path("export/\(name)")])
            try moto.put(bucket: bucket, key: name + ".gz", file: folder.path("export/\(name).gz"))
        }
        return bucket
    }

    /// The example's text with the bucket, the database and the folder put in.
    static func placed(_ text: String, bucket: String, database: String, folder: TemporaryFolder) -> String {
        text.replacingOccurrences(of: "s3://exports/events/latest/", with: "s3://\(bucket)/")
            .replacingOccurrences(of: "postgresql://batch@db.internal/warehouse", with: database)
            .replacingOccurrences(of: "/srv/jobs", with: folder.url.path)
    }

    /// The day's figures the example wrote: every event counted once, a line per day.
    static func expectFigures(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
        let total = parts * eventsPerPart
        let expected = ["day,events"] + days.enumerated().map { offset, day in
            // Ids 1...total, day index id % 3.
            let count = (1...total).filter { $0 % days.count == offset }.count
            return "\(day),\(count)"
        }
        #expect(lines == expected, "\(lines)", sourceLocation: sourceLocation)
    }

    @Test("docs/feeds.md: check, then one run loads every part once and writes the day's figures after")
    func oneMachine() throws {
        let moto = try MotoServer.shared
        let folder = try TemporaryFolder()
        let bucket = try Self.exportParts(moto, folder)
        let database = try PostgresServer.database("events")
        let example = try ReadmeExample(after: "### From an S3 prefix to the statistics job", in: "docs/feeds.md")
        #expect(example.yaml.hasPrefix("# jobs/events.yaml\n") && example.yaml.contains("parallel: 4"))
        try folder.write("jobs/events.yaml", Self.placed(example.yaml, bucket: bucket, database: database, folder: folder))
        let (status, output) = try ReadmeExample.runShell(example.shell.replacingOccurrences(of: "batchrun ", with: Batchrun.binary.path + " "),
                                                          in: folder, environment: moto.environment)
        #expect(status == 0, "\(output)")
        let total = Self.parts * Self.eventsPerPart
        #expect(try PostgresServer.psql(database, "SELECT count(*), count(DISTINCT id) FROM event") == "\(total)|\(total)")
        try Self.expectFigures(folder.path("reports/daily-events.csv"))
        #expect(try folder.json("var/events.json")["status"] as? String == "ok")
    }

    @Test("docs/queue.md: submit --fan-out with a group and its limit; a confined worker (--root) runs the needs, each part, then the figures once")
    func fleet() throws {
        let moto = try MotoServer.shared
        let folder = try TemporaryFolder()
        let bucket = try Self.exportParts(moto, folder)
        let database = try PostgresServer.database("warehouse")
        let example = try ReadmeExample(after: "A worked example: yesterday's export as 400 gzipped parts", in: "docs/queue.md")
        #expect(example.yaml.hasPrefix("# jobs/load.yaml\n") && example.shell.contains("--fan-out load_events"))
        try folder.write("jobs/load.yaml", Self.placed(example.yaml, bucket: bucket, database: database, folder: folder))
        // The worker stops once the queue is empty, and lets items reach moto on the loopback.
        let host = moto.endpoint.replacingOccurrences(of: "http://", with: "")
        let script = Self.placed(example.shell, bucket: bucket, database: database, folder: folder)
            .replacingOccurrences(of: "--root \(folder.url.path)", with: "--root \(folder.url.path) --once --allow-host \(host)")
            .replacingOccurrences(of: "batchrun ", with: Batchrun.binary.path + " ")
        #expect(script.contains("--once --allow-host"))
        let (status, output) = try ReadmeExample.runShell(script, in: folder, environment: moto.environment)
        #expect(status == 0, "\(output)")
        #expect(output.contains("queued batch 1: \(Self.parts) parts of load_events") && output.contains("group warehouse: at most 8 running"),
                "\(output)")
        let total = Self.parts * Self.eventsPerPart
        #expect(try PostgresServer.psql(database, "SELECT count(*), count(DISTINCT id) FROM event") == "\(total)|\(total)")
        try Self.expectFigures(folder.path("reports/daily-events.csv"))
        let states = try PostgresServer.psql(database, "SELECT state || ' ' || count(*) FROM _batchrun_queue GROUP BY state")
        #expect(states == "done \(Self.parts + 2)", "\(states)")
    }
}
