import Foundation
import GRDB
import Testing
import BatchRunKit
@testable import batchrun

/// `batchrun runner`, the queue worker's child, spoken to as a worker does: requests on its
/// descriptor 3, one exit status a line on its descriptor 4 (here through named pipes).
@Suite("Queue runner")
struct RunnerTests {
    /// A runner started on two named pipes in `folder`; its ends of the protocol. With `sent`,
    /// its requests are a file holding those lines, there before it starts (it may end first).
    struct Runner {
        let process: Process
        let requests: FileHandle
        let statuses: FileHandle

        init(in folder: TemporaryFolder, arguments: [String] = [], sent: [String]? = nil) throws {
            // A request written after the runner ended fails with EPIPE instead of ending the test process.
            signal(SIGPIPE, SIG_IGN)
            if let sent {
                try folder.write("requests", sent.map { try Self.request($0, log: $0 + ".log") + "\n" }.joined())
            } else {
                #expect(mkfifo(folder.path("requests"), 0o600) == 0)
            }
            #expect(mkfifo(folder.path("statuses"), 0o600) == 0)
            process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            // The shell opens the pipes as 3 and 4 (each open waits for the test's end), then becomes the runner.
            process.arguments = ["-c", "exec \"$0\" runner \"$@\" 3<requests 4>statuses", Batchrun.binary.path] + arguments
            process.currentDirectoryURL = folder.url
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            // Close-on-exec: a process another test starts meanwhile (a database server) must not
            // keep the requests' write end open, or the runner never sees their end.
            requests = FileHandle(fileDescriptor: open(folder.path("requests"), O_WRONLY | O_CLOEXEC), closeOnDealloc: true)
            statuses = FileHandle(fileDescriptor: open(folder.path("statuses"), O_RDONLY | O_CLOEXEC), closeOnDealloc: true)
        }

        func send(_ file: String, log: String) throws {
            try requests.write(contentsOf: Data((Self.request(file, log: log) + "\n").utf8))
        }

        /// A worker's request to run `file`, its output to `log`.
        static func request(_ file: String, log: String) throws -> String {
            let request = ["arguments": ["run", file, "--no-progress", "--color", "never"], "log": log] as [String: Any]
            return String(decoding: try JSONSerialization.data(withJSONObject: request), as: UTF8.self)
        }

        /// The next answer; nil when the runner ended without one, or gave none within 60 s.
        func answer() -> String? {
            var line = Data()
            var ready = pollfd(fd: statuses.fileDescriptor, events: Int16(POLLIN), revents: 0)
            while poll(&ready, 1, 60_000) == 1, let byte = try? statuses.read(upToCount: 1), !byte.isEmpty {
                if byte == Data("\n".utf8) { return String(decoding: line, as: UTF8.self) }
                line += byte
            }
            return nil
        }
    }

    static func item(_ id: Int) -> String {
        """
        version: 1
        store: store.sqlite
        entities:
          T: { columns: { id: integer primary key } }
        jobs:
          load:
            steps: [{ insert: { entity: T, rows: [{ id: \(id) }] } }]
        """
    }

    @Test("a runner interrupted between items ends by SIGINT at the next request, which it neither runs nor answers (a worker marked such an item done once)")
    func interruptedWhileIdle() throws {
        let folder = try TemporaryFolder()
        try folder.write("one.yaml", Self.item(1))
        try folder.write("two.yaml", Self.item(2))
        let runner = try Runner(in: folder)
        defer { if runner.process.isRunning { kill(runner.process.processIdentifier, SIGKILL) } }

        try runner.send("one.yaml", log: "one.log")
        #expect(runner.answer() == "0")
        // A stop meant for the first item that came after its answer, as a lost lease's can.
        kill(runner.process.processIdentifier, SIGINT)
        Thread.sleep(forTimeInterval: 0.5)
        // The runner may have ended already (a signal that came before it checked after its
        // answer ends it there): then the request finds no reader, which is as good.
        try? runner.send("two.yaml", log: "two.log")
        let answer = runner.answer()
        runner.process.waitUntilExit()

        #expect(QueueTests.endedBySIGINT(runner.process), "status \(runner.process.terminationStatus)")
        let rows = try StoreInspector(path: folder.path("store.sqlite")).count("SELECT count(*) FROM T WHERE id = 2")
        // Not run and not answered; or, had the signal come late, run in full and answered ok.
        #expect((answer == nil && rows == 0) || (answer == "0" && rows == 1), "answer \(answer ?? "none"), rows \(rows)")
    }

    @Test("a runner whose worker died before it started ends by SIGINT at once, running nothing the worker had sent (it once ran its item on, unwatched)")
    func workerGoneBeforeTheStart() throws {
        let folder = try TemporaryFolder()
        try folder.write("one.yaml", Self.item(1))
        // A worker that is gone: a process that has ended, and whose id is not the runner's parent.
        let gone = Process()
        gone.executableURL = URL(fileURLWithPath: "/bin/true")
        try gone.run()
        gone.waitUntilExit()
        let runner = try Runner(in: folder, arguments: ["--worker", String(gone.processIdentifier)], sent: ["one.yaml"])
        defer { if runner.process.isRunning { kill(runner.process.processIdentifier, SIGKILL) } }
        let answer = runner.answer()
        runner.process.waitUntilExit()
        #expect(QueueTests.endedBySIGINT(runner.process), "status \(runner.process.terminationStatus)")
        #expect(answer == nil)
        #expect(!FileManager.default.fileExists(atPath: folder.path("store.sqlite")), "the item ran")
    }

    @Test("a request the runner cannot read is answered with exit status 2, and the next item runs")
    func unreadableRequest() throws {
        let folder = try TemporaryFolder()
        try folder.write("one.yaml", Self.item(1))
        let runner = try Runner(in: folder)
        defer { if runner.process.isRunning { kill(runner.process.processIdentifier, SIGKILL) } }

        try runner.requests.write(contentsOf: Data("{not json\n".utf8))
        #expect(runner.answer() == "2")
        try runner.send("one.yaml", log: "one.log")
        #expect(runner.answer() == "0")
        try runner.requests.close()
        runner.process.waitUntilExit()
        #expect(runner.process.terminationReason == .exit && runner.process.terminationStatus == 0)
        #expect(try StoreInspector(path: folder.path("store.sqlite")).count("SELECT count(*) FROM T") == 1)
    }

    @Test("an item whose runner ended without answering is never done: a clean exit puts it back, a crash fails it; an item's own child ends with the item's status")
    func unansweredItemStatus() {
        let exited = { (code: Int32) in code << 8 }
        #expect(ChildProcessExecutor.itemStatus(processStatus: exited(0), ranInRunner: true, killedHere: false) == ExitStatus.interrupted)
        #expect(ChildProcessExecutor.itemStatus(processStatus: exited(0), ranInRunner: false, killedHere: false) == ExitStatus.ok)
        #expect(ChildProcessExecutor.itemStatus(processStatus: exited(1), ranInRunner: true, killedHere: false) == ExitStatus.failed)
        #expect(ChildProcessExecutor.itemStatus(processStatus: SIGSEGV, ranInRunner: true, killedHere: false) == 128 + SIGSEGV)
        #expect(ChildProcessExecutor.itemStatus(processStatus: SIGINT, ranInRunner: true, killedHere: false) == ExitStatus.interrupted)
        #expect(ChildProcessExecutor.itemStatus(processStatus: SIGKILL, ranInRunner: true, killedHere: true) == ExitStatus.interrupted)
    }
}
