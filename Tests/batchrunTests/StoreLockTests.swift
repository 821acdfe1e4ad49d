import Foundation
import GRDB
import Testing

/// Another program (the `sqlite3` shell) holds the store's write lock while batchrun runs.
@Suite("A store locked by another program", .serialized)
struct StoreLockTests {
    static let entity = """
        entities:
          T:
            columns: { id: integer primary key, v: text }
        """

    /// Makes the store with table T and one row, in WAL mode.
    static func makeStore(_ folder: TemporaryFolder) throws {
        let queue = try DatabaseQueue(path: folder.path("store.sqlite"))
        try queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA journal_mode = WAL") }
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE T (id INTEGER PRIMARY KEY, v TEXT)")
            try db.execute(sql: "INSERT INTO T VALUES (1, 'a')")
        }
    }

    @Test("two processes opening a store in a rollback journal at the same moment both run: one turns it to WAL, the other waits for that")
    func twoOpenARollbackJournalStore() throws {
        let folder = try TemporaryFolder()
        try folder.write("job.yaml", """
            version: 1
            store: { sqlite: store.sqlite, busy_timeout: 30s }
            \(Self.entity)
            jobs:
              touch:
                merge_policy: recompute
                steps:
                  - batch-update: { entity: T, set: { v: "v || 'x'" } }
            """)
        // Two at once met the conversion at the same moment in about 1 of 7 tries here.
        for attempt in 1...25 {
            for file in ["store.sqlite", "store.sqlite-wal", "store.sqlite-shm"] { try? FileManager.default.removeItem(atPath: folder.path(file)) }
            let queue = try DatabaseQueue(path: folder.path("store.sqlite"))
            try queue.write { db in
                try db.execute(sql: "CREATE TABLE T (id INTEGER PRIMARY KEY, v TEXT)")
                try db.execute(sql: "INSERT INTO T VALUES (1, 'a')")
            }
            #expect(try queue.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") } == "delete")
            try queue.close()
            let logs = try (0..<2).map { try FileHandle(forWritingTo: URL(fileURLWithPath: folder.write("run\($0).log", ""))) }
            let processes = try logs.map { try Batchrun.start(["job.yaml", "--quiet"], in: folder, output: $0) }
            for process in processes { process.waitUntilExit() }
            let statuses = processes.map(\.terminationStatus)
            let output = try (0..<2).map { try String(contentsOfFile: folder.path("run\($0).log"), encoding: .utf8) }.joined()
            #expect(statuses == [0, 0], "attempt \(attempt): \(output)")
            if statuses != [0, 0] { break }
            let value = try DatabaseQueue(path: folder.path("store.sqlite")).read { db in try String.fetchOne(db, sql: "SELECT v FROM T") }
            #expect(value == "axx", "attempt \(attempt)")
        }
    }

    @Test("a fetch-only job runs while another program holds the write lock")
    func fetchBesideWriter() throws {
        let folder = try TemporaryFolder()
        try Self.makeStore(folder)
        try folder.write("job.yaml", """
            version: 1
            store: { sqlite: store.sqlite, busy_timeout: 200ms }
            \(Self.entity)
            jobs:
              read:
                steps:
                  - fetch: { entity: T, output: out.csv }
            """)
        let holder = try LockHolder(store: folder.path("store.sqlite"))
        defer { holder.release() }
        let result = try Batchrun.run(["job.yaml", "--no-progress"], in: folder.url)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(try String(contentsOfFile: folder.path("out.csv"), encoding: .utf8) == "id,v\n1,a\n")
    }

    @Test("creating a missing table while the lock is held past busy_timeout: exit 1, naming the lock and the wait")
    func createWhileLocked() throws {
        let folder = try TemporaryFolder()
        try Self.makeStore(folder)
        try folder.write("job.yaml", """
            version: 1
            store: { sqlite: store.sqlite, busy_timeout: 200ms }
            entities:
              U:
                columns: { id: integer primary key }
            jobs:
              read:
                steps:
                  - fetch: { entity: U }
            """)
        let holder = try LockHolder(store: folder.path("store.sqlite"))
        defer { holder.release() }
        let result = try Batchrun.run(["job.yaml", "--no-progress"], in: folder.url)
        #expect(result.status == 1)
        #expect(result.stderr.contains("job.yaml: cannot open store \(folder.path("store.sqlite")): another connection held the store's write lock for longer than busy_timeout (200ms)\nnothing was run"),
                "\(result.stderr)")
    }

    @Test("a batch that cannot get the write lock fails the job (exit 1) after its retries, saying which lock and how long")
    func writeWhileLocked() throws {
        let folder = try TemporaryFolder()
        try Self.makeStore(folder)
        try folder.write("job.yaml", """
            version: 1
            store: { sqlite: store.sqlite, busy_timeout: 100ms }
            \(Self.entity)
            jobs:
              load:
                retries: 2
                steps:
                  - insert: { entity: T, rows: [{ id: 2, v: b }] }
            """)
        let holder = try LockHolder(store: folder.path("store.sqlite"))
        defer { holder.release() }
        let result = try Batchrun.run(["job.yaml", "--no-progress", "--report", "r.json"], in: folder.url)
        #expect(result.status == 1)
        #expect(result.stdout.contains("    error: insert T: another connection held the store's write lock for longer than busy_timeout (100ms)"),
                "\(result.stdout)")
        #expect(result.stdout.components(separatedBy: "  retrying a batch of load:").count == 3, "\(result.stdout)")
        let job = (try folder.json("r.json")["jobs"] as! [[String: Any]])[0]
        #expect(job["attempts"] as? Int == 3)
    }

    @Test("the lock released within the retries: the job succeeds")
    func retriedUntilFree() throws {
        let folder = try TemporaryFolder()
        try Self.makeStore(folder)
        try folder.write("job.yaml", """
            version: 1
            store: { sqlite: store.sqlite, busy_timeout: 300ms }
            \(Self.entity)
            jobs:
              load:
                retries: 20
                steps:
                  - insert: { entity: T, rows: [{ id: 2, v: b }] }
            """)
        let holder = try LockHolder(store: folder.path("store.sqlite"))
        // The lock goes once the run has met it and is retrying (not after a fixed time: a
        // loaded machine may start the run later than that).
        let outputPath = folder.path("output.txt")
        #expect(FileManager.default.createFile(atPath: outputPath, contents: nil))
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        let process = try Batchrun.start(["job.yaml", "--no-progress"], in: folder, output: output)
        let retrying = "retrying a batch of load: another connection held the store's write lock"
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, process.isRunning,
              !((try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "").contains(retrying) {
            Thread.sleep(forTimeInterval: 0.02)
        }
        holder.release()
        process.waitUntilExit()
        try output.close()
        let stdout = try String(contentsOfFile: outputPath, encoding: .utf8)
        #expect(process.terminationStatus == 0, "\(stdout)")
        #expect(stdout.contains(retrying), "\(stdout)")
    }
}

/// A `sqlite3` shell that has run `BEGIN IMMEDIATE` on a store and holds the write lock
/// until `release()`.
final class LockHolder: Sendable {
    private let process: Process
    private let input: Pipe

    init(store: String) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = [store]
        input = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        // The shell waits for the lock (`.timeout`): without it, a BEGIN IMMEDIATE that met the
        // probe's own momentary lock below failed at once, and the shell never held the lock (a
        // fresh-clone CI run: "The file couldn't be locked" after 30 s).
        input.fileHandleForWriting.write(Data(".timeout 10000\nBEGIN IMMEDIATE;\nUPDATE T SET v = v WHERE id = 1;\n".utf8))
        // Wait until the lock is really held: our own BEGIN IMMEDIATE must fail at once. Up to
        // 30 s: on a loaded machine the shell took more than 2 s to start (a fresh-clone CI run).
        var configuration = Configuration()
        configuration.busyMode = .immediateError
        for _ in 0..<3_000 {
            // Opening reads the schema, which fails while the shell briefly holds a stronger
            // lock than the write lock (a loaded machine met it): try again.
            guard let probe = try? DatabaseQueue(path: store, configuration: configuration) else {
                Thread.sleep(forTimeInterval: 0.01)
                continue
            }
            do {
                try probe.inDatabase { db in try db.execute(sql: "BEGIN IMMEDIATE; ROLLBACK") }
                Thread.sleep(forTimeInterval: 0.01)
            } catch {
                return
            }
        }
        throw CocoaError(.fileLocking)
    }

    /// Commits and ends the shell; safe to call twice.
    func release() {
        guard process.isRunning else { return }
        try? input.fileHandleForWriting.write(contentsOf: Data("COMMIT;\n.quit\n".utf8))
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}
