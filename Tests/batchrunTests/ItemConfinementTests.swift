import Foundation
import Testing
import TestSupport

/// What an item may touch (JOBFILE.md section 15), end to end with the real binary: `worker
/// --root` confines feeds, outputs and SQLite stores when the item is loaded and again at each
/// open; hooks refused or allowed on both queue kinds; a PostgreSQL worker that will not start
/// unconfined; the GRANTs of docs/postgresql.md with real roles.
@Suite("What an item may touch")
struct ItemConfinementTests {
    /// `inside/` (the root, with `data/feed.csv` and the queue `inside/q`) and `outside/`, with a
    /// feed of its own and `inside/link` leading to it.
    static func layout() throws -> TemporaryFolder {
        let folder = try TemporaryFolder()
        try folder.write("inside/data/feed.csv", "id,n\n1,10\n2,20\n")
        try folder.write("outside/feed.csv", "id,n\n99,99\n")
        try FileManager.default.createSymbolicLink(atPath: folder.path("inside/link"), withDestinationPath: "../outside")
        return folder
    }

    /// A job file: an import of `feed` into `store`, then a fetch of it to `output` (paths as an
    /// item in `inside/q` reads them: relative to the queue); `extra` is added to the job.
    static func item(store: String, feed: String, output: String, extra: String = "") -> String {
        """
        version: 1
        store: \(store)
        entities:
          Row: { columns: { id: integer primary key, n: integer } }
        jobs:
          load:
        \(extra.isEmpty ? "" : "    \(extra)\n")    steps:
              - insert: { entity: Row, from: \(feed) }
              - fetch: { entity: Row, output: \(output) }
        """
    }

    /// Submits each (name, text) to `queue` in order.
    static func submit(_ items: [(String, String)], to queue: String, in folder: TemporaryFolder) throws {
        for (name, text) in items {
            try folder.write(name, text)
            let submitted = try Batchrun.run(["submit", queue, name], in: folder.url)
            #expect(submitted.status == 0, "\(name): \(submitted.stderr)")
        }
    }

    /// The text of the log of the item named `name` in `state`/ of queue folder `queue`.
    static func log(_ name: String, in state: String, _ queue: String, _ folder: TemporaryFolder) -> String? {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: folder.path("\(queue)/\(state)"))) ?? []
        return files.first { $0.hasSuffix("-\(name).log") }.flatMap { try? String(contentsOfFile: folder.path("\(queue)/\(state)/\($0)"), encoding: .utf8) }
    }

    @Test("--root: an item reaching outside through .., an absolute path or a symbolic link fails as invalid naming the path, before anything runs; one inside runs")
    func confinedWhenClaimed() throws {
        let folder = try Self.layout()
        try Self.submit([
            ("ok.yaml", Self.item(store: "../data/ok.sqlite", feed: "../data/feed.csv", output: "../data/ok.csv")),
            ("dotdot.yaml", Self.item(store: "../data/dotdot.sqlite", feed: "../data/feed.csv", output: "../../outside/out.csv")),
            ("absolute.yaml", Self.item(store: "../data/absolute.sqlite", feed: folder.path("outside/feed.csv"), output: "../data/a.csv")),
            ("link.yaml", Self.item(store: "../link/link.sqlite", feed: "../data/feed.csv", output: "../data/l.csv")),
        ], to: "inside/q", in: folder)
        let worked = try Batchrun.run(["worker", "inside/q", "--once", "--root", "inside"], in: folder.url)
        #expect(worked.status == 2, "\(worked.stdout)\(worked.stderr)")
        #expect(Self.log("ok.yaml", in: "done", "inside/q", folder) != nil)
        #expect(FileManager.default.fileExists(atPath: folder.path("inside/data/ok.csv")))
        for (name, named) in [("dotdot.yaml", "output \(folder.path("outside/out.csv"))"),
                              ("absolute.yaml", "feed file \(folder.path("outside/feed.csv"))"),
                              ("link.yaml", "the store \(folder.path("inside/link/link.sqlite"))")] {
            let log = try #require(Self.log(name, in: "failed", "inside/q", folder), "\(name) did not fail")
            #expect(log.contains("\(named): outside the folders this worker lets items touch"), "\(name): \(log)")
            #expect(log.contains("nothing was run"), "\(name): \(log)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path("outside")).sorted() == ["feed.csv"])
        for store in ["dotdot", "absolute"] { #expect(!FileManager.default.fileExists(atPath: folder.path("inside/data/\(store).sqlite"))) }
    }

    @Test("a folder swapped for a symbolic link out of the root after the claim's check: the open is refused and nothing is written or read outside")
    func swappedAfterTheCheck() throws {
        let folder = try Self.layout()
        for name in ["db", "out", "feeds"] { try FileManager.default.createDirectory(atPath: folder.path("inside/data/\(name)"), withIntermediateDirectories: true) }
        try folder.write("inside/data/feeds/feed.csv", "id,n\n1,10\n")
        try folder.write("outside/feeds/feed.csv", "id,n\n99,99\n")
        try FileManager.default.createDirectory(atPath: folder.path("pause"), withIntermediateDirectories: true)
        // Each item has one folder swapped: its store's, its output's, its feed's.
        let swaps = [("store.yaml", "db", "."), ("output.yaml", "out", "."), ("feed.yaml", "feeds", "feeds")]
        try Self.submit([
            ("store.yaml", Self.item(store: "../data/db/s.sqlite", feed: "../data/feed.csv", output: "../data/s.csv")),
            ("output.yaml", Self.item(store: "../data/o.sqlite", feed: "../data/feed.csv", output: "../data/out/x.csv")),
            ("feed.yaml", Self.item(store: "../data/f.sqlite", feed: "../data/feeds/feed.csv", output: "../data/f.csv")),
        ], to: "inside/q", in: folder)
        let worker = Process()
        worker.executableURL = Batchrun.binary
        worker.arguments = ["worker", "inside/q", "--once", "--root", "inside"]
        worker.currentDirectoryURL = folder.url
        worker.environment = ProcessInfo.processInfo.environment.merging(["BATCHRUN_TEST_PAUSE_AFTER_CHECK": folder.path("pause")]) { $1 }
        worker.standardOutput = FileHandle.nullDevice
        worker.standardError = FileHandle.nullDevice
        try worker.run()
        defer { if worker.isRunning { kill(worker.processIdentifier, SIGKILL) } }
        for _ in swaps {
            let paused = folder.path("pause/paused")
            let deadline = Date().addingTimeInterval(120)
            while !FileManager.default.fileExists(atPath: paused) && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
            let item = try String(contentsOfFile: paused, encoding: .utf8)
            let (_, name, target) = try #require(swaps.first { item.hasSuffix("-\($0.0)") })
            try FileManager.default.removeItem(atPath: folder.path("inside/data/\(name)"))
            try FileManager.default.createSymbolicLink(atPath: folder.path("inside/data/\(name)"), withDestinationPath: "../../outside/\(target)")
            #expect(FileManager.default.createFile(atPath: folder.path("pause/go"), contents: nil))
            while FileManager.default.fileExists(atPath: paused) && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        }
        worker.waitUntilExit()
        #expect(worker.terminationStatus != 0)
        for (item, _, _) in swaps {
            let log = try #require(Self.log(item, in: "failed", "inside/q", folder), "\(item) did not fail")
            #expect(log.contains("outside the folders this worker lets items touch") || log.contains("refused"), "\(item): \(log)")
        }
        // Outside holds what it held: no store, no output, and the outside feed's row was not imported.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path("outside")).sorted() == ["feed.csv", "feeds"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path("outside/feeds")) == ["feed.csv"])
        #expect(!FileManager.default.fileExists(atPath: folder.path("inside/data/f.csv")))
    }

    @Test("folder queue: hooks run by default; with --no-hooks an item with a hook fails as invalid and its hook does not run")
    func folderHooks() throws {
        let folder = try Self.layout()
        let hooked = Self.item(store: "../data/h.sqlite", feed: "../data/feed.csv", output: "../data/h.csv",
                               extra: "on_complete: \"touch \(folder.path("outside/HOOK"))\"")
        try Self.submit([("hooked.yaml", hooked)], to: "inside/q", in: folder)
        let refused = try Batchrun.run(["worker", "inside/q", "--once", "--no-hooks"], in: folder.url)
        #expect(refused.status == 2, "\(refused.stdout)\(refused.stderr)")
        let log = try #require(Self.log("hooked.yaml", in: "failed", "inside/q", folder))
        #expect(log.contains("on_complete: this worker runs no shell hooks (it was started with --no-hooks)"), "\(log)")
        #expect(!FileManager.default.fileExists(atPath: folder.path("outside/HOOK")))
        #expect(!FileManager.default.fileExists(atPath: folder.path("inside/data/h.sqlite")))

        try Self.submit([("hooked.yaml", hooked)], to: "inside/q", in: folder)
        let allowed = try Batchrun.run(["worker", "inside/q", "--once"], in: folder.url)
        #expect(allowed.status == 0, "\(allowed.stdout)\(allowed.stderr)")
        #expect(FileManager.default.fileExists(atPath: folder.path("outside/HOOK")))
    }

    @Test("a PostgreSQL worker without --root or --trust-submitters does not start: exit 2, saying why; so do contradictory or missing options")
    func postgresWorkerRefusesToStart() throws {
        let folder = try TemporaryFolder()
        // No server is needed: nothing is connected to.
        let url = "postgresql://nobody@127.0.0.1:1/none"
        let unconfined = try Batchrun.run(["worker", url, "--once"], in: folder.url)
        #expect(unconfined.status == 2)
        #expect(unconfined.stderr.contains("give --root DIR") && unconfined.stderr.contains("--trust-submitters"), "\(unconfined.stderr)")
        let both = try Batchrun.run(["worker", url, "--once", "--trust-submitters", "--allow-hooks", "--no-hooks"], in: folder.url)
        #expect(both.status == 2)
        #expect(both.stderr.contains("--allow-hooks and --no-hooks cannot be used together"), "\(both.stderr)")
        let missing = try Batchrun.run(["worker", url, "--once", "--root", "no-such-folder"], in: folder.url)
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("no-such-folder: no such folder"), "\(missing.stderr)")
    }
}

/// The same on a PostgreSQL queue.
@Suite("What an item may touch: PostgreSQL")
struct PostgresItemConfinementTests {
    @Test("PostgreSQL queue: hooks refused without --allow-hooks (invalid, not run) and run with it; --root refuses an output outside")
    func hooksAndRoots() throws {
        let url = try PostgresServer.database("confine")
        let folder = try ItemConfinementTests.layout()
        let hook = folder.path("outside/HOOK")
        func hooked() throws {
            try folder.write("inside/hooked.yaml", """
                version: 1
                store: { postgres: "\(url)" }
                entities:
                  T: { columns: { id: integer primary key } }
                jobs:
                  load:
                    on_complete: "touch \(hook)"
                    steps: [{ insert: { entity: T, rows: [{ id: 1 }] } }]
                """)
            #expect(try Batchrun.run(["submit", url, "inside/hooked.yaml"], in: folder.url).status == 0)
        }
        try hooked()
        let refused = try Batchrun.run(["worker", url, "--once", "--trust-submitters"], in: folder.url)
        #expect(refused.status == 2, "\(refused.stdout)\(refused.stderr)")
        #expect(try PostgresServer.psql(url, "SELECT state FROM _batchrun_queue") == "failed")
        #expect(try PostgresServer.psql(url, "SELECT log FROM _batchrun_queue").contains("runs them only when started with --allow-hooks"))
        #expect(!FileManager.default.fileExists(atPath: hook))
        #expect(try PostgresServer.psql(url, "SELECT count(*) FROM pg_tables WHERE tablename = 't'") == "0")

        try PostgresServer.psql(url, "DELETE FROM _batchrun_queue")
        try hooked()
        let allowed = try Batchrun.run(["worker", url, "--once", "--root", "inside", "--allow-hooks"], in: folder.url)
        #expect(allowed.status == 0, "\(allowed.stdout)\(allowed.stderr)")
        #expect(FileManager.default.fileExists(atPath: hook))

        try PostgresServer.psql(url, "DELETE FROM _batchrun_queue")
        try folder.write("inside/out.yaml", """
            version: 1
            store: { postgres: "\(url)" }
            entities:
              T: { columns: { id: integer primary key } }
            jobs:
              dump:
                steps: [{ fetch: { entity: T, output: ../outside/t.csv } }]
            """)
        #expect(try Batchrun.run(["submit", url, "inside/out.yaml"], in: folder.url).status == 0)
        let confined = try Batchrun.run(["worker", url, "--once", "--root", "inside"], in: folder.url)
        #expect(confined.status == 2, "\(confined.stdout)\(confined.stderr)")
        #expect(try PostgresServer.psql(url, "SELECT log FROM _batchrun_queue").contains("t.csv: outside the folders"))
        #expect(!FileManager.default.fileExists(atPath: folder.path("outside/t.csv")))
        #expect(!FileManager.default.fileExists(atPath: folder.url.deletingLastPathComponent().appendingPathComponent("outside/t.csv").path))
    }

    @Test("the GRANTs of docs/postgresql.md with real roles: the submit role submits and lists, and cannot claim, update, delete or read the store's tables; the worker role runs the items")
    func grants() throws {
        let admin = try PostgresServer.database("grants")
        let database = String(admin.split(separator: "/").last!)
        let server = String(admin.dropLast(database.count + 1)).replacingOccurrences(of: "postgres@", with: "")
        let worker = server.replacingOccurrences(of: "postgresql://", with: "postgresql://batchrun_worker@") + "/" + database
        let submit = server.replacingOccurrences(of: "postgresql://", with: "postgresql://batchrun_submit@") + "/" + database
        // As docs/postgresql.md gives them (roles are per cluster: made once).
        try PostgresServer.psql(admin, """
            DO $$ BEGIN
              IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'batchrun_worker') THEN CREATE ROLE batchrun_worker LOGIN; END IF;
              IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'batchrun_submit') THEN CREATE ROLE batchrun_submit LOGIN; END IF;
            END $$;
            GRANT CONNECT ON DATABASE \(database) TO batchrun_worker, batchrun_submit;
            GRANT USAGE, CREATE ON SCHEMA public TO batchrun_worker;
            GRANT USAGE ON SCHEMA public TO batchrun_submit;
            """)
        let folder = try TemporaryFolder()
        // The worker role makes the queue's table (it owns it), then grants the submit role its two rights.
        #expect(try Batchrun.run(["queue", worker], in: folder.url).status == 0)
        try PostgresServer.psql(worker, """
            GRANT SELECT, INSERT ON _batchrun_queue TO batchrun_submit;
            GRANT USAGE ON SEQUENCE _batchrun_queue_id_seq TO batchrun_submit;
            """)
        try folder.write("item.yaml", """
            version: 1
            store: { postgres: "\(worker)" }
            entities:
              T: { columns: { id: integer primary key, v: text } }
            jobs:
              load:
                steps: [{ insert: { entity: T, rows: [{ id: 1, v: a }] } }]
            """)
        let submitted = try Batchrun.run(["submit", submit, "item.yaml"], in: folder.url)
        #expect(submitted.status == 0, "\(submitted.stderr)")
        let listed = try Batchrun.run(["queue", submit], in: folder.url)
        #expect(listed.status == 0 && listed.stdout.contains("pending 1"), "\(listed.stdout)\(listed.stderr)")
        // The submit role cannot claim (a worker of its own fails), update or delete.
        let claimed = try Batchrun.run(["worker", submit, "--once", "--trust-submitters"], in: folder.url)
        #expect(claimed.stdout.contains("cannot claim an item") && claimed.stdout.contains("permission denied"), "\(claimed.stdout)\(claimed.stderr)")
        #expect(throws: (any Error).self) { try PostgresServer.psql(submit, "UPDATE _batchrun_queue SET state = 'done'") }
        #expect(throws: (any Error).self) { try PostgresServer.psql(submit, "DELETE FROM _batchrun_queue") }
        #expect(try PostgresServer.psql(admin, "SELECT state FROM _batchrun_queue") == "pending")
        // The worker role runs it.
        let worked = try Batchrun.run(["worker", worker, "--once", "--root", folder.path(".")], in: folder.url)
        #expect(worked.status == 0, "\(worked.stdout)\(worked.stderr)")
        #expect(try PostgresServer.psql(admin, "SELECT state FROM _batchrun_queue") == "done")
        #expect(try PostgresServer.psql(admin, "SELECT v FROM t") == "a")
        // ... and the submit role cannot read what it wrote, nor the run state.
        #expect(throws: (any Error).self) { try PostgresServer.psql(submit, "SELECT count(*) FROM t") }
        #expect(throws: (any Error).self) { try PostgresServer.psql(submit, "SELECT count(*) FROM _batchrun_runs") }
    }
}
