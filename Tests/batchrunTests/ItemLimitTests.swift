import Foundation
import Testing

/// A confined worker's limits and what stops a feed that yields no rows (JOBFILE.md section 15,
/// "A confined worker": limits, secrets, files), end to end with the real binary on a folder
/// queue: `--max-rows`, `--max-bytes` and `--max-item-time` end an item `failed` naming the
/// limit; a cancel stops a run inside a run of blank lines; `read_timeout` ends a trickle; hooks
/// see none of the worker's secrets; params are on no command line.
@Suite("A confined worker: limits, hooks and command lines")
struct ItemLimitTests {
    /// A job file in `inside/` importing `feed` (relative to the queue `inside/q`) into `inside/store.sqlite`.
    static func importing(_ feed: String, extra: String = "") -> String {
        """
        version: 1
        store: ../store.sqlite
        entities:
          Row: { columns: { id: integer primary key, n: integer } }
        jobs:
          load:
        \(extra.isEmpty ? "" : "    \(extra)\n")    steps:
              - insert: { entity: Row, from: \(feed) }
        """
    }

    /// The one log in `inside/q/STATE/`.
    static func log(_ state: String, _ folder: TemporaryFolder) -> String {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: folder.path("inside/q/\(state)"))) ?? []
        return files.filter { $0.hasSuffix(".log") }.compactMap { try? String(contentsOfFile: folder.path("inside/q/\(state)/\($0)"), encoding: .utf8) }
            .joined()
    }

    /// A file of `count` blank lines after a CSV header: a feed that yields no rows.
    static func writeBlankLines(_ count: Int, to path: String) throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: path, contents: Data("id,n\n".utf8)))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        handle.seekToEndOfFile()
        let block = Data(repeating: UInt8(ascii: "\n"), count: 1 << 20)
        for _ in 0..<(count >> 20) { handle.write(block) }
        try handle.close()
    }

    /// An HTTP server on 127.0.0.1 that answers every GET with a CSV header, then one blank
    /// line every 0.2 s, forever (chunked); its port, and the process to stop.
    static func startTrickle() throws -> (port: Int, process: Process) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-u", "-c", """
            import socket, threading, time
            s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(('127.0.0.1', 0)); s.listen(8)
            print(s.getsockname()[1], flush=True)
            def serve(c):
                try:
                    c.recv(65536)
                    c.sendall(b'HTTP/1.1 200 OK\\r\\nContent-Type: text/csv\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n5\\r\\nid,n\\n\\r\\n')
                    while True:
                        c.sendall(b'1\\r\\n\\n\\r\\n'); time.sleep(0.2)
                except Exception:
                    pass
            while True:
                c, _ = s.accept(); threading.Thread(target=serve, args=(c,), daemon=True).start()
            """]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let line = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        guard let port = Int(line.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            kill(process.processIdentifier, SIGKILL)
            throw CocoaError(.fileReadUnknown)
        }
        return (port, process)
    }

    @Test("--max-rows: a 300,000-row feed stops after at most 1,000 rows; the item is failed naming the limit")
    func maxRows() throws {
        let folder = try TemporaryFolder()
        var feed = "id,n\n"
        for id in 1...300_000 { feed += "\(id),\(id % 600)\n" }
        try folder.write("inside/big.csv", feed)
        try folder.write("inside/big.yaml", Self.importing("../big.csv"))
        #expect(try Batchrun.run(["submit", "inside/q", "inside/big.yaml"], in: folder.url).status == 0)
        let worked = try Batchrun.run(["worker", "inside/q", "--once", "--root", "inside", "--max-rows", "1000"], in: folder.url)
        #expect(worked.status == 1, "\(worked.stdout)\(worked.stderr)")
        let log = Self.log("failed", folder)
        #expect(log.contains("this worker's --max-rows 1000 was reached"), "\(log)")
        let rows = try StoreInspector(path: folder.path("inside/store.sqlite")).count("SELECT count(*) FROM Row")
        #expect(rows <= 1000)
    }

    @Test("--max-bytes: 64 MiB of blank lines (no rows) stops at the limit; the item is failed naming it")
    func maxBytes() throws {
        let folder = try TemporaryFolder()
        try Self.writeBlankLines(64 << 20, to: folder.path("inside/blank.csv"))
        try folder.write("inside/blank.yaml", Self.importing("../blank.csv"))
        #expect(try Batchrun.run(["submit", "inside/q", "inside/blank.yaml"], in: folder.url).status == 0)
        let worked = try Batchrun.run(["worker", "inside/q", "--once", "--root", "inside", "--max-bytes", "2MB"], in: folder.url)
        #expect(worked.status == 1, "\(worked.stdout)\(worked.stderr)")
        let log = Self.log("failed", folder)
        #expect(log.contains("this worker's --max-bytes 2000000 was reached"), "\(log)")
        // Stopped near the limit: the line reached is about 2,000,000, not 64 million.
        let line = log.firstMatch(of: /blank\.csv:(\d+)/).flatMap { Int($0.1) } ?? 0
        #expect(line > 0 && line < 3_000_000, "\(log)")
    }

    @Test("--max-item-time: an item reading a feed that trickles forever is stopped and failed naming the limit, well before its read_timeout")
    func maxItemTime() throws {
        let folder = try TemporaryFolder()
        let trickle = try Self.startTrickle()
        // SIGKILL: a child of the test process may have SIGTERM blocked.
        defer { kill(trickle.process.processIdentifier, SIGKILL); trickle.process.waitUntilExit() }
        try folder.write("inside/slow.yaml", Self.importing("\"http://127.0.0.1:\(trickle.port)/slow.csv\", read_timeout: 10m"))
        #expect(try Batchrun.run(["submit", "inside/q", "inside/slow.yaml"], in: folder.url).status == 0)
        let started = Date()
        let worked = try Batchrun.run(["worker", "inside/q", "--once", "--root", "inside", "--max-item-time", "2s", "--allow-host", "127.0.0.1"], in: folder.url)
        #expect(Date().timeIntervalSince(started) < 60)
        #expect(worked.status == 1, "\(worked.stdout)\(worked.stderr)")
        let log = Self.log("failed", folder)
        #expect(log.contains("this worker's --max-item-time 2.00s was reached"), "\(log)")
    }

    @Test("read_timeout ends a feed that sends almost nothing (a byte every 0.2 s), naming read_timeout")
    func trickleTimesOut() throws {
        let folder = try TemporaryFolder()
        let trickle = try Self.startTrickle()
        // SIGKILL: a child of the test process may have SIGTERM blocked.
        defer { kill(trickle.process.processIdentifier, SIGKILL); trickle.process.waitUntilExit() }
        try folder.write("inside/slow.yaml", Self.importing("\"http://127.0.0.1:\(trickle.port)/slow.csv\", read_timeout: 1s"))
        let started = Date()
        let result = try Batchrun.run(["run", "inside/slow.yaml"], in: folder.url)
        #expect(Date().timeIntervalSince(started) < 60)
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("bytes came in 1s (read_timeout)"), "\(result.stdout)")
    }

    @Test("SIGINT stops a run inside a feed of blank lines (no batch boundary comes) within seconds, ending it cancelled")
    func cancelInsideBlankLines() throws {
        let folder = try TemporaryFolder()
        try Self.writeBlankLines(512 << 20, to: folder.path("blank.csv"))
        try folder.write("blank.yaml", """
            version: 1
            store: store.sqlite
            entities:
              Row: { columns: { id: integer primary key, n: integer } }
            jobs:
              load:
                steps:
                  - insert: { entity: Row, from: blank.csv }
            """)
        let process = try Batchrun.start(["run", "blank.yaml"], in: folder)
        Thread.sleep(forTimeInterval: 1.5)
        let sent = Date()
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
        #expect(Date().timeIntervalSince(sent) < 10)
        #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGINT)
    }

    @Test("a confined worker runs hooks only with --allow-hooks; then they see no credential of the worker (PGPASSWORD, AWS_*), only what --allow-env names")
    func hookEnvironment() throws {
        let folder = try TemporaryFolder()
        try folder.write("inside/data.csv", "id,n\n1,1\n")
        try folder.write("inside/hooked.yaml", Self.importing("../data.csv", extra: "on_complete: \"env > \(folder.path("inside/hook-env.txt"))\""))
        let secrets = ["PGPASSWORD": "pg-XYZZY", "AWS_SECRET_ACCESS_KEY": "aws-PLUGH", "FEED_TOKEN": "token-FROTZ"]
        #expect(try Batchrun.run(["submit", "inside/q", "inside/hooked.yaml"], in: folder.url).status == 0)
        let refused = try Batchrun.run(["worker", "inside/q", "--once", "--root", "inside"], in: folder.url, environment: secrets)
        #expect(refused.status == 2, "\(refused.stdout)\(refused.stderr)")
        #expect(Self.log("failed", folder).contains("a worker with --root runs them only when started with --allow-hooks"))
        #expect(!FileManager.default.fileExists(atPath: folder.path("inside/hook-env.txt")))
        #expect(try Batchrun.run(["submit", "inside/q", "inside/hooked.yaml"], in: folder.url).status == 0)
        let worked = try Batchrun.run(["worker", "inside/q", "--once", "--root", "inside", "--allow-hooks", "--allow-env", "FEED_TOKEN"],
                                      in: folder.url, environment: secrets)
        #expect(worked.status == 0, "\(worked.stdout)\(worked.stderr)")
        let environment = try String(contentsOfFile: folder.path("inside/hook-env.txt"), encoding: .utf8)
        #expect(!environment.contains("pg-XYZZY") && !environment.contains("aws-PLUGH"), "\(environment)")
        #expect(environment.contains("FEED_TOKEN=token-FROTZ") && environment.contains("BATCHRUN_JOB=load"), "\(environment)")
    }

    @Test("ca_file is confined like a feed: /etc/ssl/certs/ca-certificates.crt outside the roots makes the item invalid, naming it")
    func caFileConfined() throws {
        let folder = try TemporaryFolder()
        try folder.write("inside/ca.yaml", Self.importing("https://127.0.0.1:1/x.csv").replacingOccurrences(
            of: "from: https://127.0.0.1:1/x.csv", with: "from: https://127.0.0.1:1/x.csv, ca_file: /etc/ssl/certs/ca-certificates.crt"))
        #expect(try Batchrun.run(["submit", "inside/q", "inside/ca.yaml"], in: folder.url).status == 0)
        let worked = try Batchrun.run(["worker", "inside/q", "--once", "--root", "inside"], in: folder.url)
        #expect(worked.status == 2, "\(worked.stdout)\(worked.stderr)")
        let log = Self.log("failed", folder)
        #expect(log.contains("ca_file /etc/ssl/certs/ca-certificates.crt: outside the folders"), "\(log)")
    }

    @Test("--allow-store: an SQLite file outside the roots is refused, naming --allow-store, and used once the worker names it")
    func allowStore() throws {
        let folder = try TemporaryFolder()
        try folder.write("inside/data.csv", "id,n\n1,1\n")
        try folder.write("outside/keep", "")
        try folder.write("inside/s.yaml", Self.importing("../data.csv").replacingOccurrences(of: "store: ../store.sqlite",
                                                                                            with: "store: ../../outside/shared.sqlite"))
        #expect(try Batchrun.run(["submit", "inside/q", "inside/s.yaml"], in: folder.url).status == 0)
        let refused = try Batchrun.run(["worker", "inside/q", "--once", "--root", "inside"], in: folder.url)
        #expect(refused.status == 2, "\(refused.stdout)\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.path("outside/shared.sqlite")))
        #expect(try Batchrun.run(["submit", "inside/q", "inside/s.yaml"], in: folder.url).status == 0)
        let allowed = try Batchrun.run(["worker", "inside/q", "--once", "--root", "inside", "--allow-store", "outside/shared.sqlite"],
                                       in: folder.url)
        #expect(allowed.status == 0, "\(allowed.stdout)\(allowed.stderr)")
        #expect(try StoreInspector(path: folder.path("outside/shared.sqlite")).count("SELECT count(*) FROM Row") == 1)
    }

    @Test("a folder item's params are on no process's command line while it runs")
    func paramsOffTheCommandLine() throws {
        let folder = try TemporaryFolder()
        try folder.write("inside/data.csv", "id,n\n1,1\n")
        try folder.write("inside/p.yaml", Self.importing("../data.csv"))
        #expect(try Batchrun.run(["submit", "inside/q", "inside/p.yaml", "--param", "secret=param-XYZZY"], in: folder.url).status == 0)
        let pause = folder.path("pause")
        try FileManager.default.createDirectory(atPath: pause, withIntermediateDirectories: true)
        let worker = try Batchrun.start(["worker", "inside/q", "--once", "--root", "inside"], in: folder,
                                        environment: ["BATCHRUN_TEST_PAUSE_AFTER_CHECK": pause])
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, !FileManager.default.fileExists(atPath: pause + "/paused") { Thread.sleep(forTimeInterval: 0.02) }
        #expect(FileManager.default.fileExists(atPath: pause + "/paused"))
        // The item's process is paused after loading it, with its params: no command line has them.
        var lines: [String] = []
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] where Int(entry) != nil {
            if let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline"), !data.isEmpty {
                lines.append(String(decoding: data.map { $0 == 0 ? 32 : $0 }, as: UTF8.self))
            }
        }
        #expect(lines.contains { $0.contains("batchrun run") || $0.contains("--handoff-descriptor") })
        #expect(!lines.contains { $0.contains("param-XYZZY") })
        #expect(FileManager.default.createFile(atPath: pause + "/go", contents: nil))
        worker.waitUntilExit()
        #expect(worker.terminationStatus == 0)
    }
}
