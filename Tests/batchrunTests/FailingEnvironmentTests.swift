import Foundation
import GRDB
import Testing

/// The store's environment fails under batchrun: the disk fills up mid-import, the store file is
/// not a database, the file system is read-only. Real conditions: a small tmpfs mounted for the
/// test (skipped, with the reason printed, only where mounting is refused).
@Suite("A failing environment", .serialized)
struct FailingEnvironmentTests {
    static let entity = """
        entities:
          Event:
            columns: { id: integer primary key, user: text not null, note: text }
        """

    @Test("the disk fills up mid-import: exit 1, says so, whole batches in an intact store, the report counts them",
          .enabled(if: TmpfsMount.refusal == nil, "mounting a tmpfs was refused"))
    func diskFull() throws {
        let folder = try TemporaryFolder()
        let disk = try TmpfsMount(size: "3m")
        defer { disk.unmount() }
        var feed = "id,user,note\n"
        for id in 1...60_000 { feed += "\(id),user\(id % 97),\(String(repeating: "n", count: 60))\n" }
        try folder.write("events.csv", feed)
        try folder.write("job.yaml", """
            version: 1
            store: \(disk.path("store.sqlite"))
            \(Self.entity)
            jobs:
              load:
                batch_size: 1000
                steps:
                  - insert: { entity: Event, from: events.csv }
            """)
        let result = try Batchrun.run(["job.yaml", "--no-progress", "--report", "r.json"], in: folder.url)
        #expect(result.status == 1)
        #expect(result.stdout.contains("    error: insert Event: the disk is full"), "\(result.stdout)")
        let queue = try DatabaseQueue(path: disk.path("store.sqlite"))
        let (count, integrity) = try queue.read { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM Event")!, try String.fetchOne(db, sql: "PRAGMA integrity_check")!)
        }
        #expect(integrity == "ok")
        #expect(count > 0 && count < 60_000 && count % 1000 == 0, "\(count) rows")
        let job = (try folder.json("r.json")["jobs"] as! [[String: Any]])[0]
        #expect((job["rows"] as! [String: Int])["inserted"] == count)
        #expect((job["batches"] as! [String: Int])["committed"] == count / 1000)
        #expect(job["status"] as? String == "failed")
    }

    @Test("the store file is not a database: exit 1 naming the file; nothing written to it, no -wal left")
    func notADatabase() throws {
        let folder = try TemporaryFolder()
        let text = "these are my notes, not a database\n" + String(repeating: "x", count: 5000)
        try folder.write("store.sqlite", text)
        try folder.write("job.yaml", """
            version: 1
            store: store.sqlite
            \(Self.entity)
            jobs:
              load:
                steps:
                  - insert: { entity: Event, rows: [{ id: 1, user: ann }] }
            """)
        let result = try Batchrun.run(["job.yaml", "--no-progress"], in: folder.url)
        #expect(result.status == 1)
        #expect(result.stderr.contains("job.yaml: cannot open store \(folder.path("store.sqlite")): the file is not an SQLite database\nnothing was run"),
                "\(result.stderr)")
        #expect(try String(contentsOfFile: folder.path("store.sqlite"), encoding: .utf8) == text)
        #expect(folder.files() == ["job.yaml", "store.sqlite"])
    }

    @Test("the store is on a read-only file system: exit 1 saying so, nothing changed",
          .enabled(if: TmpfsMount.refusal == nil, "mounting a tmpfs was refused"))
    func readOnlyFileSystem() throws {
        let folder = try TemporaryFolder()
        let disk = try TmpfsMount(size: "2m")
        defer { disk.unmount() }
        let job = { (id: Int) in """
            version: 1
            store: \(disk.path("store.sqlite"))
            \(Self.entity)
            jobs:
              load:
                steps:
                  - insert: { entity: Event, rows: [{ id: \(id), user: ann }] }
            """ }
        try folder.write("first.yaml", job(1))
        #expect(try Batchrun.run(["first.yaml", "--quiet"], in: folder.url).status == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: disk.path("store.sqlite")))
        let filesBefore = try FileManager.default.contentsOfDirectory(atPath: disk.url.path).sorted()
        try disk.remount(readOnly: true)
        try folder.write("second.yaml", job(2))
        let result = try Batchrun.run(["second.yaml", "--no-progress"], in: folder.url)
        #expect(result.status == 1)
        #expect((result.stdout + result.stderr).contains("the store is on a read-only file system"), "\(result.stdout)\(result.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: disk.path("store.sqlite"))) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: disk.url.path).sorted() == filesBefore)
    }
}
