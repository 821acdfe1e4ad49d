import Foundation
import GRDB
import Testing

/// Compressed feeds imported by the real binary: each format gzip- and zstd-compressed (by the
/// `gzip` and `zstd` programs) gives the tables the plain feeds give; `format:`/`compression:`
/// name a feed whose name says nothing; a truncated `.gz` fails naming the feed with the
/// batches before it committed; kills and `--resume` end with the uninterrupted store; a
/// compressed feed changed since is refused (exit 2, store untouched).
@Suite("Compressed feeds, end to end")
struct CompressedFeedRunTests {
    static let rows = 12_000
    static let formats = ["csv", "tsv", "ndjson", "json"]

    /// `data/FORMAT-feed.FORMAT` plain, and `.gz` and `.zst` beside it.
    static func prepareFeeds(_ folder: TemporaryFolder) throws {
        let ids = 1...rows
        func note(_ id: Int) -> String { id % 7 == 0 ? "two\nlines, \(id)" : "n\(id)" }
        try folder.write("data/csv-feed.csv", "id,v,note\n" + ids.map { "\($0),\(Double($0) / 4),\"\(note($0))\"\n" }.joined())
        try folder.write("data/tsv-feed.tsv", "id\tv\tnote\n" + ids.map { "\($0)\t\(Double($0) / 4)\tt\($0)\n" }.joined())
        func json(_ id: Int) -> String {
            "{\"id\": \(id), \"v\": \(Double(id) / 4), \"note\": \"\(note(id).replacingOccurrences(of: "\n", with: "\\n"))\"}"
        }
        try folder.write("data/ndjson-feed.ndjson", ids.map { json($0) + "\n" }.joined())
        try folder.write("data/json-feed.json", "[\n" + ids.map(json).joined(separator: ",\n") + "\n]\n")
        for format in formats {
            let path = folder.path("data/\(format)-feed.\(format)")
            try Self.program("gzip", ["-q", "-k", "-f", path])
            try Self.program("zstd", ["-q", "-k", "-f", path])
        }
    }

    static func program(_ name: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [name] + arguments
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(name) \(arguments)")
    }

    /// A job file importing every format from files ending in `suffix` (`""`, `.gz`, `.zst`).
    static func jobFile(suffix: String, batchSize: Int = 1_000) -> String {
        """
        version: 1
        store: store.sqlite
        entities:
        \(formats.map { "  \($0.capitalized)Row: { columns: { id: integer primary key, v: real not null, note: text } }" }.joined(separator: "\n"))
        jobs:
        \(formats.map { """
              \($0):
                batch_size: \(batchSize)
                steps:
                  - insert: { entity: \($0.capitalized)Row, from: data/\($0)-feed.\($0)\(suffix) }
            """ }.joined(separator: "\n"))
        """
    }

    static func tables(_ folder: TemporaryFolder) throws -> [String: [String]] {
        var configuration = Configuration()
        configuration.busyMode = .timeout(30)
        return try DatabaseQueue(path: folder.path("store.sqlite"), configuration: configuration).read { db in
            var found: [String: [String]] = [:]
            for format in formats {
                let table = format.capitalized + "Row"
                guard try db.tableExists(table) else { continue }
                found[table] = try Row.fetchAll(db, sql: "SELECT * FROM \(table) ORDER BY id").map(\.description)
            }
            return found
        }
    }

    /// The tables of every format imported from the plain feeds.
    static func reference() throws -> [String: [String]] {
        let folder = try TemporaryFolder()
        try prepareFeeds(folder)
        try folder.write("job.yaml", jobFile(suffix: ""))
        let result = try Batchrun.run(["job.yaml", "--quiet"], in: folder.url)
        #expect(result.status == 0, "\(result.stderr)")
        return try tables(folder)
    }

    @Test("every format from .gz and .zst files gives the tables the plain files give", arguments: [".gz", ".zst"])
    func sameTables(suffix: String) throws {
        let expected = try Self.reference()
        #expect(expected.count == 4 && expected.values.allSatisfy { $0.count == Self.rows })
        let folder = try TemporaryFolder()
        try Self.prepareFeeds(folder)
        try folder.write("job.yaml", Self.jobFile(suffix: suffix))
        let result = try Batchrun.run(["job.yaml", "--quiet"], in: folder.url)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try Self.tables(folder) == expected)
    }

    @Test("format: and compression: name a feed whose file name says nothing")
    func explicitKeys() throws {
        let folder = try TemporaryFolder()
        try Self.prepareFeeds(folder)
        try FileManager.default.moveItem(atPath: folder.path("data/csv-feed.csv.gz"), toPath: folder.path("data/export.bin"))
        try folder.write("job.yaml", FeedJobs.csvJob(["insert: { entity: CsvRow, from: data/export.bin, format: csv, compression: gzip }"]))
        let result = try Batchrun.run(["job.yaml", "--quiet"], in: folder.url)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try Self.tables(folder)["CsvRow"] == Self.reference()["CsvRow"])
    }

    @Test("an unknown compression: or format: is a job-file error with its line and column (exit 2)")
    func badKeys() throws {
        let folder = try TemporaryFolder()
        try Self.prepareFeeds(folder)
        try folder.write("job.yaml", FeedJobs.csvJob(["insert: { entity: CsvRow, from: data/csv-feed.csv.gz, compression: bzip2 }",
                                                       "insert: { entity: CsvRow, from: data/csv-feed.csv.gz, format: xml }"]))
        let result = try Batchrun.run(["job.yaml"], in: folder.url)
        #expect(result.status == 2)
        #expect(result.stderr.contains("job.yaml:8:"), "\(result.stderr)")
        #expect(result.stderr.contains("compression must be gzip, zstd or none, found 'bzip2'"), "\(result.stderr)")
        #expect(result.stderr.contains("job.yaml:9:"), "\(result.stderr)")
        #expect(result.stderr.contains("format must be csv, tsv, json or ndjson, found 'xml'"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.path("store.sqlite")))
    }

    @Test("a truncated .csv.gz fails the job naming the feed; the batches before the cut stay committed")
    func truncatedGzip() throws {
        let folder = try TemporaryFolder()
        try Self.prepareFeeds(folder)
        let path = folder.path("data/csv-feed.csv.gz")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: path))
        try folder.write("job.yaml", Self.jobFile(suffix: ".gz", batchSize: 500))
        let result = try Batchrun.run(["job.yaml", "--select", "csv"], in: folder.url)
        #expect(result.status == 1)
        let output = result.stdout + result.stderr
        #expect(output.contains("data/csv-feed.csv.gz:"), "\(output)")
        #expect(output.contains("the gzip stream is truncated"), "\(output)")
        let kept = try Self.tables(folder)["CsvRow"] ?? []
        #expect(kept.count > 0 && kept.count < Self.rows && kept.count % 500 == 0, "\(kept.count) rows kept")
    }

    @Test("imports of .gz and .zst feeds killed (SIGKILL, SIGINT) and resumed until ok equal one uninterrupted run",
          arguments: [".gz", ".zst"])
    func killedAndResumed(suffix: String) throws {
        let expected = try Self.reference()
        let folder = try TemporaryFolder()
        try Self.prepareFeeds(folder)
        try folder.write("job.yaml", Self.jobFile(suffix: suffix, batchSize: 100))
        let started = Date()
        let reference = try TemporaryFolder()
        try Self.prepareFeeds(reference)
        try reference.write("job.yaml", Self.jobFile(suffix: suffix, batchSize: 100))
        #expect(try Batchrun.run(["job.yaml", "--quiet"], in: reference.url).status == 0)
        let runs = InterruptedRuns(folder: folder, arguments: ["job.yaml", "--quiet"], interruptions: 8,
                                   wholeRun: Date().timeIntervalSince(started))
        let (interruptions, committed, endedOK) = try runs.run()
        #expect(endedOK, "the run never ended ok")
        #expect(interruptions >= 6 && committed >= 3, "\(interruptions) interruptions, \(committed) with committed rows")
        let found = try Self.tables(folder)
        #expect(found == expected, "\(Self.difference(found, expected))")
    }

    /// For a failure's message: per table, the rows missing and the rows that should not be there.
    static func difference(_ found: [String: [String]], _ expected: [String: [String]]) -> String {
        Set(found.keys).union(expected.keys).sorted().compactMap { table in
            let have = found[table] ?? [], want = expected[table] ?? []
            let missing = Set(want).subtracting(have), extra = Set(have).subtracting(want)
            guard !missing.isEmpty || !extra.isEmpty || have.count != want.count else { return nil }
            return "\(table): \(have.count) rows for \(want.count); missing \(missing.sorted().prefix(3)) of \(missing.count), "
                + "extra \(extra.sorted().prefix(3)) of \(extra.count)"
        }.joined(separator: "; ")
    }

    @Test("a .gz feed changed since the interrupted run stops --resume: exit 2, naming the feed; the store untouched")
    func changedCompressedFeedRefused() throws {
        let folder = try TemporaryFolder()
        try Self.prepareFeeds(folder)
        try folder.write("job.yaml", Self.jobFile(suffix: ".gz", batchSize: 50))
        try FeedJobs.killAfter(rows: 1, folder, arguments: ["job.yaml", "--quiet", "--select", "csv"])
        let before = try Self.tables(folder)["CsvRow"] ?? []
        #expect(before.count > 0 && before.count < Self.rows, "killed after \(before.count) rows")
        // The same size and time, one byte of the compressed file changed.
        let path = folder.path("data/csv-feed.csv.gz")
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        bytes[bytes.count - 12] ^= 0xFF
        try bytes.write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.modificationDate: attributes[.modificationDate]!], ofItemAtPath: path)
        let result = try Batchrun.run(["job.yaml", "--resume", "--select", "csv"], in: folder.url)
        #expect(result.status == 2)
        #expect(result.stderr.contains("data/csv-feed.csv.gz"), "\(result.stderr)")
        #expect(try Self.tables(folder)["CsvRow"] == before)
    }

    /// What a program prints (`gzip -dc FILE`).
    static func output(of name: String, _ arguments: [String]) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [name] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(name) \(arguments)")
        return data
    }

    @Test("fetch outputs ending in .gz and .zst are compressed: gzip -d and zstd -d give the plain output; no partial file stays")
    func compressedOutputs() throws {
        let folder = try TemporaryFolder()
        try Self.prepareFeeds(folder)
        let outputs = ["rows.csv", "rows.csv.gz", "rows.csv.zst", "rows.ndjson", "rows.ndjson.gz"]
        try folder.write("job.yaml", FeedJobs.jobFile(jobs: """
              load:
                steps:
                  - insert: { entity: CsvRow, from: data/csv-feed.csv }
              out:
                needs: load
                steps:
            \(outputs.map { "      - fetch: { entity: CsvRow, order_by: [id], output: out/\($0) }\n" }.joined())
            """))
        let result = try Batchrun.run(["job.yaml", "--quiet"], in: folder.url)
        #expect(result.status == 0, "\(result.stderr)")
        let csv = try Data(contentsOf: URL(fileURLWithPath: folder.path("out/rows.csv")))
        #expect(csv.count > 100_000)
        #expect(try Self.output(of: "gzip", ["-dc", folder.path("out/rows.csv.gz")]) == csv)
        #expect(try Self.output(of: "zstd", ["-dcq", folder.path("out/rows.csv.zst")]) == csv)
        let ndjson = try Data(contentsOf: URL(fileURLWithPath: folder.path("out/rows.ndjson")))
        #expect(try Self.output(of: "gzip", ["-dc", folder.path("out/rows.ndjson.gz")]) == ndjson)
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder.path("out/rows.csv.gz"))).count < csv.count / 2)
        #expect(folder.files().filter { $0.contains(".partial") }.isEmpty, "\(folder.files())")
    }
}

extension CompressedFeedRunTests {
    @Test("an https:// output:, or an s3:// from: without a key, is a job-file error (exit 2)")
    func remoteRefused() throws {
        let folder = try TemporaryFolder()
        try folder.write("job.yaml", FeedJobs.csvJob(["fetch: { entity: CsvRow, output: \"https://example.com/out.csv?token=secret\" }",
                                                       "insert: { entity: CsvRow, from: s3://bucket-only.csv }"]))
        let result = try Batchrun.run(["job.yaml"], in: folder.url)
        #expect(result.status == 2)
        #expect(result.stderr.contains("job.yaml:8:"), "\(result.stderr)")
        #expect(result.stderr.contains("output: https:// feeds and outputs are not supported yet"), "\(result.stderr)")
        #expect(result.stderr.contains("job.yaml:9:") && result.stderr.contains("names no object; write s3://BUCKET/KEY"),
                "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.path("store.sqlite")))
    }
}

extension CompressedFeedRunTests {
    @Test("bad_rows: skip on a .csv.gz writes the rejected rows, uncompressed, to FEED.rejected.csv (data/f.csv.gz gives data/f.rejected.csv)")
    func rejectedRowsOfCompressedFeed() throws {
        let folder = try TemporaryFolder()
        try folder.write("data/f.csv", "id,v,note\n1,1.5,a\n2,oops,b\n3,3.5,c\n")
        try Self.program("gzip", ["-q", "-f", folder.path("data/f.csv")])
        try folder.write("job.yaml", FeedJobs.csvJob(["insert: { entity: CsvRow, from: data/f.csv.gz, bad_rows: skip }"]))
        let result = try Batchrun.run(["job.yaml", "--quiet"], in: folder.url)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try Self.tables(folder)["CsvRow"]?.count == 2)
        let rejected = try String(contentsOfFile: folder.path("data/f.rejected.csv"), encoding: .utf8)
        #expect(rejected.contains("2,oops,b") || rejected.contains("oops"), "\(rejected)")
        #expect(rejected.hasPrefix("line,reason"), "\(rejected)")
    }
}
