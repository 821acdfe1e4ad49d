import Foundation
import Testing
import TestSupport

/// A PostgreSQL queue item whose feeds are all remote (section 14) needs no shared file
/// system: submitted from a folder that is gone by the time a worker (confined by `--root` to
/// a folder of its own, where no feed's path exists) runs it, it ends done with its rows.
extension PostgresQueueTests {
    @Test("an item whose feeds are all http:// runs on a worker that sees neither the submitter's folder nor the feeds' files: done, every row right")
    func remoteFeedsNeedNoSharedFolder() throws {
        let url = try PostgresServer.database("remote")
        let served = try TemporaryFolder()
        try CompressedFeedRunTests.prepareFeeds(served)
        let server = try HTTPFeedServer(root: served.path("data"))
        defer { server.stop() }
        let submitted = try TemporaryFolder()
        try submitted.write("item.yaml", """
            version: 1
            store: { postgres: "\(url)" }
            entities:
              CsvRow: { columns: { id: integer primary key, v: real not null, note: text } }
              TsvRow: { columns: { id: integer primary key, v: real not null, note: text } }
            jobs:
              load:
                batch_size: 500
                steps:
                  - insert: { entity: CsvRow, from: "\(server.url)/csv-feed.csv.gz" }
                  - insert: { entity: TsvRow, from: "\(server.url)/tsv-feed.tsv" }
            """)
        let submission = try Batchrun.run(["submit", url, "item.yaml"], in: submitted.url)
        #expect(submission.status == 0, "\(submission.stderr)")
        // The submitter's folder goes; the worker runs elsewhere, where no feed's path exists.
        try FileManager.default.removeItem(at: submitted.url)
        #expect(!FileManager.default.fileExists(atPath: submitted.url.path))
        let worker = try TemporaryFolder()
        for name in ["csv-feed.csv.gz", "tsv-feed.tsv", "data/csv-feed.csv.gz", "data/tsv-feed.tsv"] {
            #expect(!FileManager.default.fileExists(atPath: worker.path(name)))
        }
        let worked = try Batchrun.run(["worker", url, "--once", "--root", worker.url.path, "--allow-host", "127.0.0.1"], in: worker.url)
        #expect(worked.status == 0, "\(worked.stdout)\(worked.stderr)")
        let log = try Batchrun.run(["queue", url, "--log", "1"], in: worker.url).stdout
        #expect(try PostgresServer.psql(url, "SELECT state FROM _batchrun_queue") == "done", "\(log)")
        // Every row once, each value as the feed has it (the notes of the CSV feed span lines).
        let ids = 1...CompressedFeedRunTests.rows
        let feeds = [("CsvRow", ids.map { $0 % 7 == 0 ? "two\nlines, \($0)" : "n\($0)" }), ("TsvRow", ids.map { "t\($0)" })]
        for (table, notes) in feeds {
            #expect(try PostgresServer.psql(url, "SELECT count(*), count(*) FILTER (WHERE v * 4 = id), min(id), max(id) FROM \(table)")
                == "\(ids.count)|\(ids.count)|1|\(ids.count)")
            #expect(try PostgresServer.psql(url, "SELECT string_agg(note, '|' ORDER BY id) FROM \(table)") == notes.joined(separator: "|"),
                    "\(table)'s notes")
        }
        #expect(server.requests.contains { $0.uri == "/csv-feed.csv.gz" } && server.requests.contains { $0.uri == "/tsv-feed.tsv" })
    }
}
