import Foundation
import Testing
import TestSupport

/// `fetch ... output: s3://BUCKET/KEY` (section 14) by the real binary against moto
/// (`MotoServer`): the object read back (with boto3) is the file a local output gives, by one
/// PUT and by a multipart upload; a real SIGINT in the middle of a multipart upload leaves no
/// object and no upload in progress.
@Suite("S3 outputs, end to end", .serialized)
struct S3OutputRunTests {
    /// A job importing `rows` rows of `data/rows.csv` and fetching them to `output` with `select`.
    static func jobFile(output: String, rows: Int, select: String = "[id, v, note]", batchSize: Int = 1_000) -> String {
        FeedJobs.jobFile(jobs: """
          load:
            steps:
              - insert: { entity: CsvRow, from: data/rows.csv }
          export:
            needs: load
            batch_size: \(batchSize)
            steps:
              - fetch: { entity: CsvRow, select: \(select), order_by: [id], output: "\(output)" }

        """)
    }

    static func writeFeed(_ folder: TemporaryFolder, rows: Int, noteLength: Int) throws {
        let pad = String(repeating: "x", count: noteLength)
        try folder.write("data/rows.csv", "id,v,note\n" + (1...rows).map { "\($0),\(Double($0) / 4),\(pad)\($0)\n" }.joined())
    }

    @Test("an output to S3 is written and reads back as the local output: one PUT (small) and multipart (12 MB)",
          arguments: [(rows: 2_000, note: 10, suffix: ""), (rows: 40_000, note: 300, suffix: ""), (rows: 2_000, note: 10, suffix: ".gz")])
    func writtenAndReadBack(rows: Int, note: Int, suffix: String) throws {
        let moto = try MotoServer.shared
        let bucket = try moto.bucket("out")
        let local = try TemporaryFolder()
        try Self.writeFeed(local, rows: rows, noteLength: note)
        try local.write("job.yaml", Self.jobFile(output: "out/rows.csv\(suffix)", rows: rows))
        #expect(try Batchrun.run(["job.yaml", "--quiet"], in: local.url).status == 0)
        let folder = try TemporaryFolder()
        try Self.writeFeed(folder, rows: rows, noteLength: note)
        try folder.write("job.yaml", Self.jobFile(output: "s3://\(bucket)/exports/rows.csv\(suffix)", rows: rows))
        let result = try Batchrun.run(["job.yaml", "--quiet"], in: folder.url, environment: moto.environment)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try moto.keys(in: bucket) == ["exports/rows.csv\(suffix)"])
        try moto.get(bucket: bucket, key: "exports/rows.csv\(suffix)", file: folder.path("back.csv\(suffix)"))
        let expected = try Data(contentsOf: URL(fileURLWithPath: local.path("out/rows.csv\(suffix)")))
        let back = try Data(contentsOf: URL(fileURLWithPath: folder.path("back.csv\(suffix)")))
        if suffix.isEmpty {
            #expect(back == expected, "\(back.count) bytes back, \(expected.count) expected")
        } else {
            try CompressedFeedRunTests.program("gzip", ["-d", "-f", folder.path("back.csv.gz"), local.path("out/rows.csv.gz")])
            #expect(try Data(contentsOf: URL(fileURLWithPath: folder.path("back.csv")))
                == Data(contentsOf: URL(fileURLWithPath: local.path("out/rows.csv"))))
        }
        // A multipart upload's ETag ends in -PARTS: 12 MB went up in 2 parts, a small output in one PUT.
        let etag = try moto.s3(["head", bucket, "exports/rows.csv\(suffix)"])
        #expect(etag.contains("-2\" ") == (back.count > 8 << 20), "\(etag)")
        #expect(try moto.pendingUploads(in: bucket) == 0)
    }

    @Test("a real SIGINT during a multipart upload leaves no object and no upload in progress")
    func cancelledLeavesNothing() throws {
        let moto = try MotoServer.shared
        let bucket = try moto.bucket("cancel")
        let folder = try TemporaryFolder()
        try Self.writeFeed(folder, rows: 40_000, noteLength: 1)
        // 40,000 rows of about 4 KB each: 160 MB, 20 parts of 8 MB.
        try folder.write("job.yaml", Self.jobFile(output: "s3://\(bucket)/exports/big.csv", rows: 40_000,
                                                  select: "{ id: id, pad: \"hex(zeroblob(2000))\" }", batchSize: 200))
        let process = try Batchrun.start(["job.yaml", "--quiet"], in: folder, environment: moto.environment)
        let deadline = Date().addingTimeInterval(240)
        var started = false
        while process.isRunning, Date() < deadline {
            if try moto.pendingUploads(in: bucket) > 0 { started = true; break }
            Thread.sleep(forTimeInterval: 0.2)
        }
        #expect(started, "no multipart upload was seen in progress before the run ended")
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal || process.terminationStatus == 130,
                "\(process.terminationReason) \(process.terminationStatus)")
        #expect(try moto.keys(in: bucket).isEmpty)
        #expect(try moto.pendingUploads(in: bucket) == 0)
    }
}
