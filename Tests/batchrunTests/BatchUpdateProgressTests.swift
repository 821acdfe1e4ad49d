import Foundation
import Testing
import TestSupport

/// A batch-update's progress as a part of the whole: its rows so far against the count of its
/// where-clause, on the live page and in the terminal's progress line.
@Suite("Batch-update progress")
struct BatchUpdateProgressTests {
    /// The long feed loaded into `update.sqlite` (by `seed`), then half of it updated 100 rows a batch (by `mark`).
    static func jobFile(in folder: TemporaryFolder, job: String) -> String {
        """
        version: 1
        store: \(folder.path("update.sqlite"))
        entities:
          Row:
            columns: { id: integer primary key, minutes: integer not null, seen: integer }
        jobs:
        """ + (job == "seed" ? """

          seed:
            batch_size: 20000
            steps:
              - insert: { entity: Row, from: \(folder.path("feed.csv")) }
        """ : """

          mark:
            batch_size: 100
            steps:
              - batch-update: { entity: Row, set: { seen: "1" }, where: "minutes < 300" }
        """)
    }

    static func seeded() throws -> TemporaryFolder {
        let folder = try TemporaryFolder()
        try Batchrun.writeLongFeed(in: folder)
        try folder.write("seed.yaml", jobFile(in: folder, job: "seed"))
        try folder.write("mark.yaml", jobFile(in: folder, job: "mark"))
        let seeded = try Batchrun.run(["run", "seed.yaml", "-q"], in: folder.url)
        #expect(seeded.status == 0, "\(seeded.stdout)\(seeded.stderr)")
        return folder
    }

    @Test("the live page shows a running batch-update with a determinate bar and its percent")
    func livePage() throws {
        let folder = try Self.seeded()
        // Batches of 10: the update runs for far longer than Chromium takes to start and render on
        // a busy machine (with 100 it had ended before the page was read); the worker is stopped
        // at the end, so the length costs the test nothing.
        try folder.write("mark.yaml", Self.jobFile(in: folder, job: "mark").replacingOccurrences(of: "batch_size: 100", with: "batch_size: 10"))
        try FileManager.default.createDirectory(atPath: folder.path("q/pending"), withIntermediateDirectories: true)
        #expect(try Batchrun.run(["submit", "q", "mark.yaml"], in: folder.url).status == 0)
        let worker = try Batchrun.start(["worker", "q", "-q"], in: folder)
        defer { worker.terminate(); worker.waitUntilExit() }
        let (serve, port) = try LivePageTests.serve("q", in: folder)
        defer { serve.terminate(); serve.waitUntilExit() }
        LivePageTests.waitForRows(port: port)
        let page = try LivePageTests.dom("http://127.0.0.1:\(port)/")
        #expect(page.contains("<h2>running (1)</h2>"), "\(page.prefix(2000))")
        #expect(page.contains("<td>mark</td>"))
        let bar = try #require(page.range(of: "<progress class=\"item-progress\"").map { String(page[$0.lowerBound...].prefix(300)) })
        #expect(bar.contains("max=\"1\""), "the update's estimate is known: a determinate bar; \(bar)")
        let value = try #require(bar.firstMatch(of: /value="([0-9.]+)"/).flatMap { Double($0.1) })
        #expect(value > 0 && value < 1, "\(bar)")
    }

    @Test("the terminal's progress line gives a running batch-update's percent")
    func terminalLine() throws {
        let folder = try Self.seeded()
        // A terminal (`script` gives the run a pseudo-terminal), 200 columns wide.
        let command = "stty cols 200 2>/dev/null; \(Batchrun.binary.path) run mark.yaml --color never"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qec", command, "/dev/null"]
        process.currentDirectoryURL = folder.url
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(text.suffix(2000))")
        let percents = text.matches(of: /running: mark ([0-9.]+)% \[[█░]+\]/).compactMap { Double($0.1) }
        #expect(!percents.isEmpty, "\(text.suffix(2000))")
        #expect(percents.contains { $0 > 0 && $0 < 100 }, "\(percents)")
    }
}
