import Foundation
import Testing
import TestSupport

/// Feeds in parts (section 17) run by the real binary: a glob's parts are one feed in name
/// order, the list recorded with the run; killed runs resume inside the part they stopped in,
/// every row once; a part changed since is refused; a glob that matches nothing, or an HTTP
/// glob, is exit 2 at its line; S3 parts come from a listing of more than one page.
@Suite("feeds in parts, end to end", .serialized)
struct FeedPartsRunTests {
    static let partCount = 6
    static let rowsPerPart = 4_000

    /// `partCount` parts of `rowsPerPart` rows of `CsvRow`, `data/part-000.csv` to `part-005`, the
    /// third gzipped and the fifth zstd-compressed; plus `data/notes.txt`, which the glob leaves out.
    static func prepareParts(_ folder: TemporaryFolder) throws {
        for part in 0..<partCount {
            let rows = (part * rowsPerPart + 1...(part + 1) * rowsPerPart).map { "\($0),\(Double($0) / 8),part \(part)\n" }
            let name = String(format: "data/part-%03d.csv", part)
            try folder.write(name, "id,v,note\n" + rows.joined())
            if part == 2 {
                try CompressedFeedRunTests.program("gzip", ["-q", "-f", folder.path(name)])
            } else if part == 4 {
                try CompressedFeedRunTests.program("zstd", ["-q", "-f", "--rm", folder.path(name)])
            }
        }
        try folder.write("data/notes.txt", "not a part\n")
    }

    /// Every row of the parts, as `CsvRow` holds them after one whole import.
    /// As `FeedJobs.csvRows` shows them, in key order.
    static var expectedRows: [String] {
        (1...partCount * rowsPerPart).map { "[id:\($0) v:\(Double($0) / 8) note:\"part \(($0 - 1) / rowsPerPart)\"]" }
    }

    /// `CsvRow` holds every row of the parts, each once (a failure names the rows missing and extra).
    static func expectAllRowsOnce(_ folder: TemporaryFolder, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let found = try FeedJobs.csvRows(folder), expected = expectedRows
        let same = found == expected
        #expect(same, "\(CompressedFeedRunTests.difference(["CsvRow": found], ["CsvRow": expected]))", sourceLocation: sourceLocation)
    }

    static func partNames(_ folder: TemporaryFolder) throws -> [String] {
        try StoreInspector(path: folder.path("store.sqlite")).strings("SELECT name FROM _batchrun_parts WHERE run_id = (SELECT max(id) FROM _batchrun_runs) ORDER BY part")
    }

    @Test("a glob's parts load as one feed in name order: every row once, the list recorded with the run, a bad row named by its part")
    func wholeLoad() throws {
        let folder = try TemporaryFolder()
        try Self.prepareParts(folder)
        try folder.write("job.yaml", FeedJobs.singleFeed("data/part-*.csv*", batchSize: 1_500, extra: ", format: csv"))
        let result = try Batchrun.run(["job.yaml", "--report", "report.json"], in: folder.url)
        #expect(result.status == 0, "\(result.stderr)")
        try Self.expectAllRowsOnce(folder)
        let names = try Self.partNames(folder).map { String($0.split(separator: "/").last!) }
        #expect(names == ["part-000.csv", "part-001.csv", "part-002.csv.gz", "part-003.csv", "part-004.csv.zst", "part-005.csv"])
        // A batch holds rows of one part: each part's 4,000 rows are 3 batches of at most 1,500.
        let report = try String(contentsOfFile: folder.path("report.json"), encoding: .utf8)
        #expect(report.contains("\"committed\" : 18") || report.contains("\"committed\":18"), "\(report)")

        // A refused row names its part and line, not the glob.
        let bad = try TemporaryFolder()
        try Self.prepareParts(bad)
        try bad.write("data/part-003.csv", "id,v,note\n1000001,1.5,ok\n1000002,not a number,bad\n")
        try bad.write("job.yaml", FeedJobs.singleFeed("data/part-*.csv*", extra: ", format: csv"))
        let failed = try Batchrun.run(["job.yaml"], in: bad.url)
        #expect(failed.status == 1)
        #expect((failed.stdout + failed.stderr).contains("data/part-003.csv:3"), "\(failed.stdout)\(failed.stderr)")
    }

    @Test("killed (SIGKILL, SIGINT) and resumed until ok: every row once, each attempt going on in the part it stopped in")
    func killedAndResumed() throws {
        let folder = try TemporaryFolder()
        try Self.prepareParts(folder)
        try folder.write("job.yaml", FeedJobs.singleFeed("data/part-*.csv*", batchSize: 100, extra: ", format: csv"))
        let started = Date()
        let reference = try TemporaryFolder()
        try Self.prepareParts(reference)
        try reference.write("job.yaml", FeedJobs.singleFeed("data/part-*.csv*", batchSize: 100, extra: ", format: csv"))
        #expect(try Batchrun.run(["job.yaml", "--quiet"], in: reference.url).status == 0)
        let runs = InterruptedRuns(folder: folder, arguments: ["job.yaml", "--quiet"], interruptions: 8,
                                   wholeRun: Date().timeIntervalSince(started))
        let (interruptions, committed, endedOK) = try runs.run()
        #expect(endedOK, "the run never ended ok")
        #expect(interruptions >= 6 && committed >= 3, "\(interruptions) interruptions, \(committed) with committed rows")
        try Self.expectAllRowsOnce(folder)
        // One list, recorded once, whatever the attempts.
        #expect(try Self.partNames(folder).count == Self.partCount)
    }

    @Test("a part changed since the killed run (one not yet read) stops --resume: exit 2 naming it; the store untouched")
    func changedPartRefused() throws {
        let folder = try TemporaryFolder()
        try Self.prepareParts(folder)
        try folder.write("job.yaml", FeedJobs.singleFeed("data/part-*.csv*", batchSize: 50, extra: ", format: csv"))
        try FeedJobs.killAfter(rows: 200, folder)
        let before = try FeedJobs.csvRows(folder)
        #expect(before.count >= 200 && before.count < 2 * Self.rowsPerPart, "killed after \(before.count) rows")
        try FeedJobs.appendRow(to: folder.path("data/part-005.csv"))
        let result = try Batchrun.run(["job.yaml", "--resume"], in: folder.url)
        #expect(result.status == 2, "\(result.stdout)\(result.stderr)")
        #expect(result.stderr.contains("part-005.csv") && result.stderr.contains("changed since run"), "\(result.stderr)")
        #expect(try FeedJobs.csvRows(folder) == before)
    }

    @Test("a glob that matches nothing is exit 2 at check, at its line, naming the pattern; an HTTP glob has no listing")
    func badGlobs() throws {
        let folder = try TemporaryFolder()
        try Self.prepareParts(folder)
        try folder.write("job.yaml", FeedJobs.singleFeed("data/exports-*.csv"))
        let none = try Batchrun.run(["check", "job.yaml"], in: folder.url)
        #expect(none.status == 2)
        #expect(none.stderr.contains("job.yaml:9:") && none.stderr.contains("no feed part matches") && none.stderr.contains("exports-*.csv"),
                "\(none.stderr)")
        try folder.write("job.yaml", FeedJobs.singleFeed("https://example.com/exports/part-*.csv"))
        let http = try Batchrun.run(["check", "job.yaml"], in: folder.url)
        #expect(http.status == 2)
        #expect(http.stderr.contains("job.yaml:9:") && http.stderr.contains("HTTP has no listing"), "\(http.stderr)")
    }

    @Test("S3 parts from a listing of two pages (1,100 other keys between them): every row once, also killed and resumed")
    func s3Parts() throws {
        let moto = try MotoServer.shared
        let folder = try TemporaryFolder()
        try Self.prepareParts(folder)
        let bucket = try moto.bucket("parts")
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path("data")).filter({ $0.hasPrefix("part-") }) {
            try moto.put(bucket: bucket, key: name, file: folder.path("data/\(name)"))
        }
        // Keys between part-002 and part-003 in byte order, so that the parts span two pages.
        // (At the bucket's top: moto 5.2's signature check fails a listing whose prefix has a
        // slash, as it does botocore's own; AWS checks the query as it signs it.)
        try moto.s3(["putmany", bucket, "part-002-note-", "1100"])
        try FileManager.default.removeItem(atPath: folder.path("data"))
        try folder.write("job.yaml", FeedJobs.singleFeed("s3://\(bucket)/part-*.csv*", batchSize: 200, extra: ", format: csv"))
        try FeedJobs.killAfter(rows: 1_000, folder, environment: moto.environment)
        let before = try FeedJobs.csvRows(folder).count
        #expect(before >= 1_000 && before < Self.partCount * Self.rowsPerPart, "killed after \(before) rows")
        let result = try Batchrun.run(["job.yaml", "--resume"], in: folder.url, environment: moto.environment)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        try Self.expectAllRowsOnce(folder)
        #expect(try Self.partNames(folder).map { $0.replacingOccurrences(of: "s3://\(bucket)/", with: "") }
                == ["part-000.csv", "part-001.csv", "part-002.csv.gz", "part-003.csv", "part-004.csv.zst", "part-005.csv"])
    }
}
