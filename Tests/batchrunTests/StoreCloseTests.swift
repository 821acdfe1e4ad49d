import Foundation
import Testing

/// What a run leaves of its SQLite store once its process has ended.
@Suite("A run's SQLite store after its process")
struct StoreCloseTests {
    @Test("a run that ended leaves its store one whole file: no -wal or -shm beside it, and a copy of the file alone holds every row (10 runs)")
    func runLeavesOneWholeFile() throws {
        let folder = try TemporaryFolder()
        try FeedJobs.bigFeed(folder, rows: 20_000)
        try folder.write("job.yaml", FeedJobs.singleFeed("data/big.csv", batchSize: 1_000))
        // Before the store was let go of at the run's end, the threads of the run that ended held
        // it past the process's exit in about 1 run in 3 (a release build; 7 of 20), and the WAL
        // with the last batches stayed beside the file.
        try Self.expectOneWholeFile(runs: 10, in: folder) { result, attempt in
            #expect(result.status == 0, "attempt \(attempt): \(result.stderr)")
        }
    }

    @Test("a run with a failed job and one skipped after it leaves its store one whole file too (5 runs)")
    func failedRunLeavesOneWholeFile() throws {
        let folder = try TemporaryFolder()
        try FeedJobs.bigFeed(folder, rows: 20_000)
        // `broken` fails (NOT NULL), so `after` is skipped and never runs: an operation that never
        // ran held its context, and so the store, until the process ended.
        try folder.write("job.yaml", FeedJobs.jobFile(jobs: """
              csv:
                batch_size: 1000
                steps:
                  - insert: { entity: CsvRow, from: data/big.csv }
              broken:
                needs: [csv]
                steps:
                  - batch-update: { entity: CsvRow, set: { v: "NULL" }, where: "id = 7" }
              after:
                needs: [broken]
                steps:
                  - batch-update: { entity: CsvRow, set: { note: "'after'" } }

            """))
        try Self.expectOneWholeFile(runs: 5, in: folder, arguments: ["job.yaml"]) { result, attempt in
            #expect(result.status == 1 && result.stdout.contains("after") && result.stdout.contains("SKIP=1"),
                    "attempt \(attempt): \(result.stdout)\(result.stderr)")
        }
    }

    /// Runs `batchrun ARGUMENTS` on a fresh `store.sqlite` `runs` times (`checked` sees each
    /// result): after each, nothing beside the store, and a copy of the file alone holds the
    /// feed's 20,000 rows. Stops at the first run that left something.
    static func expectOneWholeFile(runs: Int, in folder: TemporaryFolder, arguments: [String] = ["job.yaml", "--quiet"],
                                   checked: (Batchrun.Result, Int) -> Void) throws {
        for attempt in 1...runs {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: folder.path("store.sqlite" + suffix)) }
            checked(try Batchrun.run(arguments, in: folder.url), attempt)
            let left = ["-wal", "-shm"].filter { FileManager.default.fileExists(atPath: folder.path("store.sqlite" + $0)) }
            #expect(left.isEmpty, "attempt \(attempt): \(left) beside the store")
            try? FileManager.default.removeItem(atPath: folder.path("copy.sqlite"))
            try FileManager.default.copyItem(atPath: folder.path("store.sqlite"), toPath: folder.path("copy.sqlite"))
            #expect(try StoreInspector(path: folder.path("copy.sqlite")).count("SELECT count(*) FROM CsvRow") == 20_000, "attempt \(attempt)")
            if !left.isEmpty { break }
        }
    }
}
