import Foundation
import GRDB
import Testing
@testable import batchrun

/// Ctrl-C as a user presses it: a real SIGINT to the real binary in the middle of a long import.
@Suite("Signals and the terminal")
struct SignalTests {
    /// A job file importing a large feed in batches of 500, with hooks.
    func longImport(rows: Int) throws -> TemporaryFolder {
        let folder = try TemporaryFolder()
        var feed = "id,user,minutes\n"
        feed.reserveCapacity(rows * 24)
        for id in 1...rows { feed += "\(id),user\(id % 977),\(Double(id % 6000) / 100)\n" }
        try folder.write("feed.csv", feed)
        try folder.write("job.yaml", """
            version: 1
            store: store.sqlite
            entities:
              Session:
                columns: { id: integer primary key, user: text not null, minutes: real }
            jobs:
              load:
                batch_size: 500
                on_complete: "echo $BATCHRUN_JOB $BATCHRUN_STATUS $BATCHRUN_ROWS_INSERTED > hook-load.txt"
                steps:
                  - insert: { entity: Session, from: feed.csv }
              after:
                needs: load
                on_complete: "echo $BATCHRUN_JOB $BATCHRUN_STATUS > hook-after.txt"
                steps:
                  - fetch: { entity: Session, select: { n: "count(*)" } }
            """)
        return folder
    }

    @Test("a SIGINT in the first milliseconds is never lost: the run never ends ok")
    func earlySignalNotLost() throws {
        let folder = try longImport(rows: 200_000)
        var generator = SystemRandomNumberGenerator()
        var endings: [String] = []
        for trial in 0..<16 {
            try? FileManager.default.removeItem(atPath: folder.path("store.sqlite"))
            let process = Process()
            process.executableURL = Batchrun.binary
            process.arguments = ["job.yaml", "--quiet"]
            process.currentDirectoryURL = folder.url
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            // From inside the process's start to its first batches (a dispatch source was armed
            // late there, and a signal in between was dropped).
            Thread.sleep(forTimeInterval: Double(trial % 8) * 0.005 + Double.random(in: 0...0.005, using: &generator))
            kill(process.processIdentifier, SIGINT)
            process.waitUntilExit()
            endings.append(process.terminationReason == .uncaughtSignal ? "signal \(process.terminationStatus)" : "exit \(process.terminationStatus)")
        }
        #expect(endings.allSatisfy { $0 == "signal \(SIGINT)" || $0 == "exit 130" }, "\(endings)")
    }

    @Test("a signal that came once every run had ended leaves the runs' status; one that cancelled a run or kept a file from running ends by SIGINT")
    func lateSignal() {
        // A worker put back an item whose run had ended ok (the signal came while the report was
        // printed) and ran it again: the run's rows twice.
        #expect(!RunCommand.endsBySIGINT(interrupted: true, statuses: [.ok], skippedFiles: false))
        #expect(!RunCommand.endsBySIGINT(interrupted: true, statuses: [.ok, .failed], skippedFiles: false))
        #expect(RunCommand.endsBySIGINT(interrupted: true, statuses: [.ok, .cancelled], skippedFiles: false))
        #expect(RunCommand.endsBySIGINT(interrupted: true, statuses: [.ok], skippedFiles: true))
        #expect(RunCommand.endsBySIGINT(interrupted: true, statuses: [], skippedFiles: true))
        #expect(!RunCommand.endsBySIGINT(interrupted: false, statuses: [.cancelled], skippedFiles: false))
    }

    @Test("SIGINT midway: ends by SIGINT, report cancelled, store intact with whole batches, hooks ran")
    func interruptMidway() throws {
        let folder = try longImport(rows: 1_000_000)
        let process = Process()
        process.executableURL = Batchrun.binary
        process.arguments = ["job.yaml", "--report", "report.json"]
        process.currentDirectoryURL = folder.url
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: try folder.write("out.txt", "")))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: try folder.write("err.txt", "")))
        try process.run()
        // Wait until some batches are committed, then press Ctrl-C.
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if let store = try? StoreInspector(path: folder.path("store.sqlite")),
               let count = try? store.count("SELECT count(*) FROM Session"), count > 0 {
                break
            }
            Thread.sleep(forTimeInterval: 0.02)   // synchronous: no wait for a busy cooperative pool
        }
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()

        #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGINT)
        let err = try String(contentsOfFile: folder.path("err.txt"), encoding: .utf8)
        #expect(err.contains("interrupted; cancelling the run"))
        #expect(err.contains("Press Ctrl-C again to stop at once"))
        let report = try folder.json("report.json")
        #expect(report["status"] as? String == "cancelled")
        let jobs = report["jobs"] as! [[String: Any]]
        #expect(jobs.map { $0["status"] as! String } == ["cancelled", "cancelled"])
        let inserted = (jobs[0]["rows"] as! [String: Int])["inserted"]!
        let committed = (jobs[0]["batches"] as! [String: Int])["committed"]!

        let queue = try DatabaseQueue(path: folder.path("store.sqlite"))
        let (count, integrity) = try queue.read { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM Session")!, try String.fetchOne(db, sql: "PRAGMA integrity_check")!)
        }
        #expect(integrity == "ok")
        #expect(count == inserted && count == committed * 500 && count > 0 && count < 1_000_000)
        #expect(try String(contentsOfFile: folder.path("hook-load.txt"), encoding: .utf8) == "load cancelled \(count)\n")
        #expect(try String(contentsOfFile: folder.path("hook-after.txt"), encoding: .utf8) == "after cancelled\n")
        let out = try String(contentsOfFile: folder.path("out.txt"), encoding: .utf8)
        #expect(out.contains("CANCELLED=2"))
    }

    @Test("on a terminal a live progress line is drawn; off a terminal there are no control characters")
    func progressLine() throws {
        let folder = try longImport(rows: 150_000)
        // `script` gives the binary a pseudo-terminal, as an interactive shell would.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qec", "\(Batchrun.binary.path) job.yaml --color never", "/dev/null"]
        process.currentDirectoryURL = folder.url
        let output = try folder.write("tty.txt", "")
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        let tty = try String(contentsOfFile: output, encoding: .utf8)
        #expect(process.terminationStatus == 0, "\(tty)")
        #expect(tty.contains("\r\u{1B}[Krunning: load "), "no progress line in: \(tty.prefix(2000))")
        #expect(tty.contains(" rows"))

        let plain = try Batchrun.run(["job.yaml", "--store", "plain.sqlite"], in: folder.url)
        #expect(plain.status == 0)
        #expect(!plain.stdout.contains("\r") && !plain.stdout.contains("\u{1B}"))
        let quiet = try Batchrun.run(["job.yaml", "--no-progress", "--store", "quiet.sqlite"], in: folder.url)
        #expect(!quiet.stdout.contains("running:"))
    }

    @Test("--select and --exclude run only the chosen jobs")
    func selection() throws {
        let folder = try TemporaryFolder()
        try folder.write("job.yaml", """
            version: 1
            store: store.sqlite
            entities:
              T: { columns: { id: integer primary key } }
            jobs:
              a: { steps: [{ insert: { entity: T, rows: [{ id: 1 }] } }] }
              b: { needs: a, steps: [{ insert: { entity: T, rows: [{ id: 2 }] } }] }
              c: { needs: b, steps: [{ insert: { entity: T, rows: [{ id: 3 }] } }] }
            """)
        let result = try Batchrun.run(["job.yaml", "--select", "b+", "--exclude", "c", "--report", "r.json"], in: folder.url)
        #expect(result.status == 0)
        #expect((try folder.json("r.json")["jobs"] as! [[String: Any]]).map { $0["name"] as! String } == ["b"])
        #expect(try StoreInspector(path: folder.path("store.sqlite")).strings("SELECT id FROM T") == ["2"])
        let unknown = try Batchrun.run(["job.yaml", "--select", "d"], in: folder.url)
        #expect(unknown.status == 2 && unknown.stderr.contains("--select d: job.yaml has no job 'd'"))
    }
}
