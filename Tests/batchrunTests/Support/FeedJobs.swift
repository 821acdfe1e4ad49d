import Foundation
import Testing
import TestSupport

/// What the feed tests (CompressedFeedRunTests, HTTPFeedRunTests, S3FeedRunTests,
/// S3OutputRunTests) share: the `CsvRow` entity and the job files around it, the long feed
/// `data/big.csv`, and the kill-then-resume sequences run on it from any URL.
enum FeedJobs {
    /// The entity the CSV feeds go into (`id,v,note`).
    static let csvRowEntity = "CsvRow: { columns: { id: integer primary key, v: real not null, note: text } }"

    /// A job file on `store.sqlite` with `CsvRow` and `jobs` (each job's lines, indented by two).
    static func jobFile(jobs: String) -> String {
        "version: 1\nstore: store.sqlite\nentities:\n  \(csvRowEntity)\njobs:\n" + jobs
    }

    /// A job file with one job, `csv`, of `steps` (each one line, flow style). Without a batch
    /// size the first step is on line 8 of the file, the second on line 9.
    static func csvJob(_ steps: [String], batchSize: Int? = nil) -> String {
        jobFile(jobs: "  csv:\n" + (batchSize.map { "    batch_size: \($0)\n" } ?? "") + "    steps:\n"
            + steps.map { "      - \($0)\n" }.joined())
    }

    /// A job importing `url` into `CsvRow`, with `extra` keys (`, ca_file: ...`).
    static func singleFeed(_ url: String, batchSize: Int = 1_000, extra: String = "") -> String {
        csvJob(["insert: { entity: CsvRow, from: \"\(url)\"\(extra) }"], batchSize: batchSize)
    }

    /// `CsvRow`'s rows in the folder's store, in key order.
    static func csvRows(_ folder: TemporaryFolder) throws -> [String] {
        try CompressedFeedRunTests.tables(folder)["CsvRow"] ?? []
    }

    /// A feed of `rows` CSV rows in `data/big.csv` (and `.gz`), long enough to be killed mid-import.
    static func bigFeed(_ folder: TemporaryFolder, rows: Int = 150_000) throws {
        try folder.write("data/big.csv", "id,v,note\n" + (1...rows).map { "\($0),\(Double($0) / 4),n\($0)\n" }.joined())
        try CompressedFeedRunTests.program("gzip", ["-q", "-k", "-f", folder.path("data/big.csv")])
    }

    /// Adds a row at the end of the feed at `path`: the same object no longer.
    static func appendRow(to path: String) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("999999,1.5,added\n".utf8))
        try handle.close()
    }

    /// Starts `batchrun ARGUMENTS` in `folder` and kills it (SIGKILL) once `CsvRow` has at least `rows` rows.
    static func killAfter(rows: Int, _ folder: TemporaryFolder, arguments: [String] = ["job.yaml", "--quiet"],
                          environment: [String: String] = [:]) throws {
        let process = try Batchrun.start(arguments, in: folder, environment: environment)
        let deadline = Date().addingTimeInterval(120)
        while process.isRunning, Date() < deadline {
            if let store = try? StoreInspector(path: folder.path("store.sqlite")),
               let count = try? store.count("SELECT count(*) FROM CsvRow"), count >= rows { break }
            Thread.sleep(forTimeInterval: 0.01)
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Imports `url` (150,000 rows of `bigFeed`, batches of 100) in `folder`, kills it with
    /// SIGKILL after 30,000 rows and runs `--resume`: expects the run killed part-way, the resumed
    /// run ok, and `CsvRow` as the local file's import leaves it (every row once). Returns what
    /// `mark()` (a server's request count) gave just before the resumed run.
    @discardableResult
    static func killAndResume(_ url: String, in folder: TemporaryFolder, environment: [String: String] = [:],
                              mark: () -> Int) throws -> Int {
        let local = try TemporaryFolder()
        try bigFeed(local)
        try local.write("job.yaml", singleFeed("data/big.csv"))
        #expect(try Batchrun.run(["job.yaml", "--quiet"], in: local.url).status == 0)
        let expected = try csvRows(local)
        try folder.write("job.yaml", singleFeed(url, batchSize: 100))
        try killAfter(rows: 30_000, folder, environment: environment)
        let before = try csvRows(folder).count
        #expect(before >= 30_000 && before < expected.count, "killed after \(before) rows")
        let seen = mark()
        let result = try Batchrun.run(["job.yaml", "--resume", "--quiet"], in: folder.url, environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try csvRows(folder) == expected)
        return seen
    }

    /// Imports `url` (`bigFeed`'s `data/big.csv` in `folder`, batches of 100), kills it with SIGKILL
    /// after 5,000 rows, adds a row to the feed and `publish`es it where the URL reads it, then
    /// runs `--resume`: expects exit 2 naming `name` and saying the feed changed, the store
    /// untouched. The resumed run's result.
    @discardableResult
    static func changedFeedRefused(_ url: String, named name: String, in folder: TemporaryFolder,
                                   environment: [String: String] = [:], publish: () throws -> Void = {}) throws -> Batchrun.Result {
        try folder.write("job.yaml", singleFeed(url, batchSize: 100))
        try killAfter(rows: 5_000, folder, environment: environment)
        let before = try csvRows(folder)
        #expect(before.count >= 5_000 && before.count < 150_000, "killed after \(before.count) rows")
        try appendRow(to: folder.path("data/big.csv"))
        try publish()
        let result = try Batchrun.run(["job.yaml", "--resume"], in: folder.url, environment: environment)
        #expect(result.status == 2, "\(result.stdout)\(result.stderr)")
        #expect(result.stderr.contains(name) && result.stderr.contains("changed since run"), "\(result.stderr)")
        #expect(try csvRows(folder) == before)
        return result
    }
}
