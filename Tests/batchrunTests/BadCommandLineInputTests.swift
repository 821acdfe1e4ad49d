import Foundation
import Testing

/// Bad input at the command line (JOBFILE.md section 15): what is not a job file, a cron line
/// that is never due, and a SIGTERM in the middle of a long `submit`.
@Suite("Bad input at the command line")
struct BadCommandLineInputTests {
    static let job = """
        version: 1
        store: store.sqlite
        entities:
          Row: { columns: { id: integer primary key } }
        jobs:
          load:
            steps: [{ insert: { entity: Row, rows: [{ id: 1 }] } }]
        """

    @Test("a FIFO, a folder or a device as the job file is refused (exit 2, saying what it is) without blocking, by check, run and submit")
    func notRegularFiles() throws {
        let folder = try TemporaryFolder()
        #expect(mkfifo(folder.path("fifo.yaml"), 0o600) == 0)
        try FileManager.default.createDirectory(atPath: folder.path("dir.yaml"), withIntermediateDirectories: true)
        for (path, kind) in [("fifo.yaml", "a FIFO"), ("dir.yaml", "a folder"), ("/dev/zero", "a device")] {
            for command in [["check", path], ["run", path], ["submit", "q", path]] {
                // Nothing writes to the FIFO: a reader that opened it blocking would hang here.
                let result = try Batchrun.run(command, in: folder.url)
                #expect(result.status == 2, "\(command): \(result.stderr)")
                #expect(result.stderr.contains("is \(kind); a job file must be a regular file"), "\(command): \(result.stderr)")
            }
        }
        let queued = (try? FileManager.default.contentsOfDirectory(atPath: folder.path("q/pending"))) ?? []
        #expect(queued.isEmpty)
    }

    @Test("schedule: a cron line with no due time in five years (31 February) is exit 2; 29 February is accepted")
    func neverDue() throws {
        let folder = try TemporaryFolder()
        try folder.write("job.yaml", Self.job)
        let never = try Batchrun.run(["schedule", "q", "job.yaml", "--cron", "0 0 31 2 *"], in: folder.url)
        #expect(never.status == 2)
        #expect(never.stderr.contains("has no due time in the next five years"), "\(never.stderr)")
        let listed = try Batchrun.run(["schedule", "q", "--list"], in: folder.url)
        #expect(!listed.stdout.contains("31 2"), "\(listed.stdout)")
        let leap = try Batchrun.run(["schedule", "q", "job.yaml", "--cron", "0 0 29 2 *"], in: folder.url)
        #expect(leap.status == 0, "\(leap.stderr)")
    }

    @Test("SIGTERM during a long submit: exit 130, one printed line for each item queued and no item queued without its line")
    func sigtermDuringSubmit() throws {
        let folder = try TemporaryFolder()
        let names = (1...1000).map { "item\($0).yaml" }
        for name in names { try folder.write(name, Self.job) }
        let outputPath = folder.path("submit.out")
        #expect(FileManager.default.createFile(atPath: outputPath, contents: nil))
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        let process = try Batchrun.start(["submit", "q"] + names, in: folder, output: output)
        // Once 100 items are queued, stop it mid-way (lines a buffer held would be lost then).
        let deadline = Date().addingTimeInterval(120)
        while Date() < deadline, ((try? FileManager.default.contentsOfDirectory(atPath: folder.path("q/pending"))) ?? []).count < 100 {
            Thread.sleep(forTimeInterval: 0.005)
        }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        try output.close()
        let printed = try String(contentsOfFile: outputPath, encoding: .utf8).split(separator: "\n").filter { $0.hasPrefix("queued ") }
        let queued = try FileManager.default.contentsOfDirectory(atPath: folder.path("q/pending")).filter { $0.hasSuffix(".yaml") }
        #expect(!printed.isEmpty)
        #expect(printed.count == queued.count, "printed \(printed.count), queued \(queued.count)")
        for line in printed {
            let name = String(line.split(separator: " ").last!.dropFirst("pending/".count))
            #expect(queued.contains(name), "\(line)")
        }
        #expect(queued.count < 1000, "the submit was not stopped mid-way")
        #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGINT, "\(process.terminationReason) \(process.terminationStatus)")
    }
}
