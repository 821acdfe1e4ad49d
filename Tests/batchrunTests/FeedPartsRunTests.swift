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

    @Test("killed (SIGKILL, SIGINT) and resumed until ok, one part at a time and three: every row once, each attempt going on in the parts it stopped in",
          arguments: [1, 3])
    func killedAndResumed(parallel: Int) throws {
        let folder = try TemporaryFolder()
        try Self.prepareParts(folder)
        let job = FeedJobs.singleFeed("data/part-*.csv*", batchSize: 100, extra: ", format: csv, parallel: \(parallel)")
        try folder.write("job.yaml", job)
        let started = Date()
        let reference = try TemporaryFolder()
        try Self.prepareParts(reference)
        try reference.write("job.yaml", job)
        #expect(try Batchrun.run(["job.yaml", "--quiet"], in: reference.url).status == 0)
        var runs = InterruptedRuns(folder: folder, arguments: ["job.yaml", "--quiet"], interruptions: 8,
                                   wholeRun: Date().timeIntervalSince(started))
        runs.rowsPerAttempt = Self.partCount * Self.rowsPerPart / 16
        // After each attempt: how many parts its checkpoint had begun and not finished.
        var mostOpen = 0
        runs.afterAttempt = {
            let checkpoint = try StoreInspector(path: folder.path("store.sqlite")).strings("SELECT checkpoint FROM _batchrun_progress "
                + "WHERE run_id = (SELECT max(id) FROM _batchrun_runs) AND checkpoint IS NOT NULL").first ?? ""
            mostOpen = max(mostOpen, checkpoint.components(separatedBy: "\"part\":").count - 1)
        }
        let (interruptions, committed, endedOK) = try runs.run()
        #expect(endedOK, "the run never ended ok")
        #expect(interruptions >= 6 && committed >= 3, "\(interruptions) interruptions, \(committed) with committed rows")
        try Self.expectAllRowsOnce(folder)
        // One part at a time keeps one begun; three at once were seen with more than one.
        #expect(parallel == 1 ? mostOpen <= 1 : mostOpen >= 2, "at most \(mostOpen) parts open in a checkpoint")
        // One list, recorded once, whatever the attempts.
        #expect(try Self.partNames(folder).count == Self.partCount)
    }

    @Test("a part changed since the killed run (one not yet read) stops --resume: exit 2 naming it and the change; the store untouched",
          arguments: ["size", "modification time"])
    func changedPartRefused(change: String) throws {
        let folder = try TemporaryFolder()
        try Self.prepareParts(folder)
        try folder.write("job.yaml", FeedJobs.singleFeed("data/part-*.csv*", batchSize: 50, extra: ", format: csv"))
        try FeedJobs.killAfter(rows: 200, folder)
        let before = try FeedJobs.csvRows(folder)
        #expect(before.count >= 200 && before.count < 2 * Self.rowsPerPart, "killed after \(before.count) rows")
        let part = folder.path("data/part-005.csv")
        if change == "size" {
            try FeedJobs.appendRow(to: part)
        } else {
            // The same bytes, written again a minute later (as a re-export of the same data would be).
            let modified = try #require(try FileManager.default.attributesOfItem(atPath: part)[.modificationDate] as? Date)
            try FileManager.default.setAttributes([.modificationDate: modified.addingTimeInterval(60)], ofItemAtPath: part)
        }
        let result = try Batchrun.run(["job.yaml", "--resume"], in: folder.url)
        #expect(result.status == 2, "\(result.stdout)\(result.stderr)")
        #expect(result.stderr.contains("part-005.csv") && result.stderr.contains("changed since run"), "\(result.stderr)")
        #expect(result.stderr.contains(change == "size" ? "its size was" : "it was modified since"), "\(result.stderr)")
        #expect(try FeedJobs.csvRows(folder) == before)
    }

    @Test("on PostgreSQL, three parts at once killed (SIGKILL, SIGINT) and resumed until ok: every row once, the list in _batchrun_parts")
    func killedAndResumedOnPostgres() throws {
        let url = try PostgresServer.database("parts")
        // Each batch 50 ms longer, so that the kills land mid-run on a fast machine too (there a
        // whole run took less than a few of the test's looks, and the run ended unkilled).
        try PostgresServer.slowInserts(url, table: "csvrow", seconds: 0.05)
        let folder = try TemporaryFolder()
        try Self.prepareParts(folder)
        let job = FeedJobs.singleFeed("data/part-*.csv*", batchSize: 100, extra: ", format: csv, parallel: 3")
            .replacingOccurrences(of: "store: store.sqlite", with: "store: { postgres: \"\(url)\" }")
        try folder.write("job.yaml", job)
        let reference = try TemporaryFolder()
        try Self.prepareParts(reference)
        try reference.write("job.yaml", FeedJobs.singleFeed("data/part-*.csv*", batchSize: 100, extra: ", format: csv"))
        let started = Date()
        #expect(try Batchrun.run(["job.yaml", "--quiet"], in: reference.url).status == 0)
        var runs = InterruptedRuns(folder: folder, arguments: ["job.yaml", "--quiet"], interruptions: 6,
                                   wholeRun: max(1, 3 * Date().timeIntervalSince(started)))
        runs.postgres = url
        runs.rowsPerAttempt = Self.partCount * Self.rowsPerPart / 16
        let (interruptions, committed, endedOK) = try runs.run()
        #expect(endedOK, "the run never ended ok")
        #expect(interruptions >= 4 && committed >= 2, "\(interruptions) interruptions, \(committed) with committed rows")
        let expected = Self.partCount * Self.rowsPerPart
        #expect(try PostgresServer.psql(url, "SELECT count(*), count(DISTINCT id), sum(id) FROM csvrow")
                == "\(expected)|\(expected)|\(expected * (expected + 1) / 2)")
        #expect(try PostgresServer.psql(url, "SELECT count(*) FROM csvrow WHERE note <> 'part ' || ((id - 1) / \(Self.rowsPerPart))") == "0")
        #expect(try PostgresServer.psql(url, "SELECT count(*) FROM _batchrun_parts WHERE run_id = (SELECT max(id) FROM _batchrun_runs)")
                == String(Self.partCount))
        #expect(try PostgresServer.psql(url, "SELECT count(*) FROM pg_trigger WHERE tgname = 'slow_batch'") == "1")
    }

    @Test("bad_rows: skip over parts: each part's rejected rows beside it, counted once, and no part of the next run")
    func rejectedRowsPerPart() throws {
        let folder = try TemporaryFolder()
        try folder.write("data/part-1.csv", "id,v,note\n1,1.5,a\n2,x,bad\n3,2.5,c\n")
        try folder.write("data/part-2.csv", "id,v,note\n4,y,bad\n5,3.5,e\n6,z,bad\n")
        try folder.write("job.yaml", FeedJobs.singleFeed("data/part-*.csv", extra: ", bad_rows: skip, parallel: 2"))
        for run in 1...2 {
            if run == 2 { try FileManager.default.removeItem(atPath: folder.path("store.sqlite")) }
            let result = try Batchrun.run(["job.yaml", "--report", "report.json"], in: folder.url)
            #expect(result.status == 0, "run \(run): \(result.stdout)\(result.stderr)")
            #expect(try FeedJobs.csvRows(folder).count == 3, "run \(run)")
            let report = try folder.json("report.json")
            let rows = try #require((report["jobs"] as? [[String: Any]])?.first?["rows"] as? [String: Int])
            #expect(rows["rejected"] == 3 && rows["inserted"] == 3, "run \(run): \(rows)")
        }
        let first = try String(contentsOfFile: folder.path("data/part-1.rejected.csv"), encoding: .utf8)
        let second = try String(contentsOfFile: folder.path("data/part-2.rejected.csv"), encoding: .utf8)
        #expect(first.contains("bad") && !first.contains(",y,") && second.components(separatedBy: "bad").count == 3, "\(first)\n\(second)")
    }

    @Test("parallel: outside 1 to 64 is exit 2 at its line; on a feed that is one file it is taken (sessions written over)")
    func badParallel() throws {
        let folder = try TemporaryFolder()
        try Self.prepareParts(folder)
        for (from, parallel, expected) in [("data/part-*.csv*", "0", "parallel must be between 1 and 64, found 0"),
                                           ("data/part-*.csv*", "65", "parallel must be between 1 and 64, found 65")] {
            try folder.write("job.yaml", FeedJobs.singleFeed(from, extra: ", format: csv, parallel: \(parallel)"))
            let result = try Batchrun.run(["check", "job.yaml"], in: folder.url)
            #expect(result.status == 2)
            #expect(result.stderr.contains("job.yaml:9:") && result.stderr.contains(expected), "\(result.stderr)")
        }
        try folder.write("job.yaml", FeedJobs.singleFeed("data/part-001.csv", extra: ", format: csv, parallel: 3"))
        let one = try Batchrun.run(["check", "job.yaml"], in: folder.url)
        #expect(one.status == 0, "\(one.stderr)")
    }

    @Test("a glob that matches nothing is exit 2 at check and at submit, at its line, naming the pattern; an HTTP glob has no listing")
    func badGlobs() throws {
        let folder = try TemporaryFolder()
        try Self.prepareParts(folder)
        try folder.write("job.yaml", FeedJobs.singleFeed("data/exports-*.csv"))
        let none = try Batchrun.run(["check", "job.yaml"], in: folder.url)
        #expect(none.status == 2)
        #expect(none.stderr.contains("job.yaml:9:") && none.stderr.contains("no feed part matches") && none.stderr.contains("exports-*.csv"),
                "\(none.stderr)")
        // `submit` lists local parts as `check` does, a plain item as well as a fan-out; nothing is
        // queued. A folder queue's item resolves `data/` against the queue, where there is none.
        for fanOut in [[], ["--fan-out", "csv"]] {
            let submitted = try Batchrun.run(["submit", "q", "job.yaml"] + fanOut, in: folder.url)
            #expect(submitted.status == 2, "\(fanOut): \(submitted.stdout)\(submitted.stderr)")
            #expect(submitted.stderr.contains("no feed part matches \(folder.path("q/data/exports-*.csv")) (looked in \(folder.path("q/data"))/, which does not exist)"),
                    "\(fanOut): \(submitted.stderr)")
        }
        let queued = (try? FileManager.default.contentsOfDirectory(atPath: folder.path("q/pending"))) ?? []
        #expect(queued.isEmpty, "\(queued)")
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

extension FeedPartsRunTests {
    @Test("an S3 object rewritten with the same size since the killed run: its new ETag stops --resume, naming the part; the store untouched")
    func s3ChangedPartRefused() throws {
        let moto = try MotoServer.shared
        let folder = try TemporaryFolder()
        try Self.prepareParts(folder)
        let bucket = try moto.bucket("etag")
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path("data")).filter({ $0.hasPrefix("part-") }) {
            try moto.put(bucket: bucket, key: name, file: folder.path("data/\(name)"))
        }
        try folder.write("job.yaml", FeedJobs.singleFeed("s3://\(bucket)/part-*.csv*", batchSize: 200, extra: ", format: csv"))
        try FeedJobs.killAfter(rows: 1_000, folder, environment: moto.environment)
        let before = try FeedJobs.csvRows(folder)
        #expect(before.count >= 1_000 && before.count < Self.partCount * Self.rowsPerPart, "killed after \(before.count) rows")
        // part-005 (not yet read) again, one note changed to another of the same length: the size stays, the ETag does not.
        let original = try String(contentsOfFile: folder.path("data/part-005.csv"), encoding: .utf8)
        let rewritten = original.replacingOccurrences(of: "part 5\n", with: "part X\n")
        #expect(rewritten.utf8.count == original.utf8.count && rewritten != original)
        try folder.write("rewritten.csv", rewritten)
        try moto.put(bucket: bucket, key: "part-005.csv", file: folder.path("rewritten.csv"))
        let result = try Batchrun.run(["job.yaml", "--resume"], in: folder.url, environment: moto.environment)
        #expect(result.status == 2, "\(result.stdout)\(result.stderr)")
        #expect(result.stderr.contains("part-005.csv") && result.stderr.contains("changed since run") && result.stderr.contains("its ETag was"),
                "\(result.stderr)")
        #expect(try FeedJobs.csvRows(folder) == before)
    }

    @Test("an S3 glob that matches nothing: check takes it (an S3 glob is listed when it runs), the run fails naming the pattern, and so does its queue item")
    func s3GlobMatchingNothing() throws {
        let moto = try MotoServer.shared
        let folder = try TemporaryFolder()
        let bucket = try moto.bucket("none")
        try moto.s3(["putmany", bucket, "other-", "3"])   // a bucket with keys, none of them a part
        try folder.write("job.yaml", FeedJobs.singleFeed("s3://\(bucket)/exports-*.csv", extra: ", format: csv")
            .replacingOccurrences(of: "store: store.sqlite", with: "store: \(folder.path("store.sqlite"))"))
        let check = try Batchrun.run(["check", "job.yaml"], in: folder.url, environment: moto.environment)
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        let run = try Batchrun.run(["job.yaml"], in: folder.url, environment: moto.environment)
        #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
        #expect((run.stdout + run.stderr).contains("no feed part matches") && (run.stdout + run.stderr).contains("s3://\(bucket)/exports-*.csv"), "\(run.stdout)\(run.stderr)")

        try FileManager.default.createDirectory(atPath: folder.path("q/pending"), withIntermediateDirectories: true)
        let submitted = try Batchrun.run(["submit", "q", "job.yaml"], in: folder.url, environment: moto.environment)
        #expect(submitted.status == 0, "\(submitted.stdout)\(submitted.stderr)")
        let worker = try Batchrun.run(["worker", "q", "--once"], in: folder.url, environment: moto.environment)
        #expect(worker.status == 1, "\(worker.stdout)\(worker.stderr)")
        let listed = try Batchrun.run(["queue", "q", "--format", "json"], in: folder.url)
        let listing = try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any] ?? [:]
        let items = listing["items"] as? [[String: Any]] ?? []
        #expect(items.count == 1 && items.first?["state"] as? String == "failed", "\(listed.stdout)")
        let log = try Batchrun.run(["queue", "q", "--log", items.first?["name"] as? String ?? "?"], in: folder.url)
        #expect(log.stdout.contains("no feed part matches") && log.stdout.contains("exports-*.csv"), "\(log.stdout)\(log.stderr)")
    }

    @Test("the README's parts example: its shell lines make four parts, and the import gives the rows the one file gives")
    func readmeExample() throws {
        let example = try ReadmeExample(after: "**Feeds in parts.**")
        #expect(example.yaml.contains("from: var/parts/sessions-*.csv"))
        let folder = try TemporaryFolder()
        try folder.copyFromPackage("examples")
        try folder.write("import_parts.yaml", example.yaml)
        let script = example.shell.replacingOccurrences(of: ".build/debug/batchrun", with: Batchrun.binary.path)
        let (status, printed) = try ReadmeExample.runShell(script, in: folder)
        #expect(status == 0, "\(printed)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path("var/parts")).sorted()
                == ["sessions-000.csv", "sessions-001.csv", "sessions-002.csv", "sessions-003.csv"])
        let (fromParts, local) = try example.sessions(in: folder, feed: "var/parts/sessions-*.csv", store: "var/parts.sqlite",
                                                      local: "examples/data/sessions.csv")
        #expect(fromParts == local && fromParts.count == 2_000, "\(fromParts.count) rows from the parts, \(local.count) from the file")
    }
}
