import BatchRunKit
import Foundation
import Testing
import Synchronization
import TestSupport

/// Fan-out batches (JOBFILE.md 17) run by real workers on a queue folder and on a real
/// PostgreSQL: `submit --fan-out JOB` queues the jobs JOB needs, then one item per part, then
/// the remaining jobs once every part is done; each row is loaded once, the needs and the
/// completion run once, the completion after the last part, also with a worker killed midway;
/// a failed part holds the batch until it is retried and done.
@Suite("fan-out batches, end to end", .serialized)
struct FanOutRunTests {
    static let partCount = 24
    static let rowsPerPart = 300

    /// A queue with `partCount` CSV parts in `data/`, and `batch.yaml`: `prepare` (needed by
    /// `load`; inserts `Started` 1, so a second run fails), `load` (the parts into `Row`), and
    /// `finish` (counts `Row` and inserts `Finish` 1 with the count, so a second run fails). A
    /// folder queue's store is SQLite; a PostgreSQL queue's is the queue's own database.
    static func prepare(_ kind: String) throws -> QueueFeatureTests.TestQueue {
        let queue = try QueueFeatureTests.TestQueue(kind)
        for part in 0..<partCount {
            let keys = (part * rowsPerPart + 1)...((part + 1) * rowsPerPart)
            try queue.folder.write(String(format: "data/part-%03d.csv", part), "id,part\n" + keys.map { "\($0),\(part)\n" }.joined())
        }
        let store = queue.isFolder ? queue.folder.path("store.sqlite") : "{ postgres: \"\(queue.location)\" }"
        try queue.folder.write("batch.yaml", """
            version: 1
            store: \(store)
            entities:
              Row: { columns: { id: integer primary key, part: integer not null } }
              Started: { columns: { id: integer primary key } }
              Finish: { columns: { id: integer primary key, n: integer not null } }
            jobs:
              prepare:
                steps:
                  - insert: { entity: Started, rows: [{ id: 1 }] }
              load:
                needs: [prepare]
                batch_size: 50
                steps:
                  - insert: { entity: Row, from: "\(queue.folder.path("data"))/part-*.csv" }
              finish:
                needs: [load]
                steps:
                  - fetch: { entity: Row, select: { n: "count(*)" }, as: total }
                  - insert: { entity: Finish, rows: [{ id: 1, n: 0 }] }
                  - batch-update: { entity: Finish, set: { n: ":total" }, where: "id = 1", params: { total: "${total.n}" } }
            """)
        return queue
    }

    /// One query's rows as text, on the queue's store.
    static func query(_ queue: QueueFeatureTests.TestQueue, _ sql: String) throws -> [String] {
        if queue.isFolder { return try StoreInspector(path: queue.folder.path("store.sqlite")).strings(sql) }
        return try PostgresServer.psql(queue.location, sql).split(separator: "\n").map(String.init)
    }

    /// `queue --batch ID --format json`.
    static func batch(_ queue: QueueFeatureTests.TestQueue, _ id: Int) throws -> [String: Any] {
        let listed = try Batchrun.run(["queue", queue.location, "--batch", String(id), "--format", "json"], in: queue.folder.url)
        #expect(listed.status == 0, "\(listed.stderr)")
        return try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any] ?? [:]
    }

    static func completionState(_ batch: [String: Any]) -> String? {
        (batch["completion"] as? [String: Any])?["state"] as? String
    }

    static func startWorker(_ queue: QueueFeatureTests.TestQueue) throws -> Process {
        try Batchrun.start(["worker", queue.location, "--jobs", "1", "--quiet"] + queue.workerOptions + (queue.isFolder ? [] : ["--lease", "2s"]),
                           in: queue.folder)
    }

    /// Every row once, `prepare` and `finish` once each, `finish` after the last part.
    static func expectLoadedOnce(_ queue: QueueFeatureTests.TestQueue, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws {
        let total = partCount * rowsPerPart
        let counts = try query(queue, "SELECT count(*) || ' ' || count(DISTINCT id) FROM row")
        #expect(counts == ["\(total) \(total)"], sourceLocation: sourceLocation)
        #expect(try query(queue, "SELECT count(*) FROM started") == ["1"], sourceLocation: sourceLocation)
        // The completion counted every row: it ran after the last part had committed.
        #expect(try query(queue, "SELECT id || ' ' || n FROM finish") == ["1 \(total)"], sourceLocation: sourceLocation)
    }

    @Test("24 parts over 3 workers, one of them killed (SIGKILL) midway and another started: every row once, needs and completion once, the completion after the last part",
          arguments: QueueFeatureTests.kinds)
    func batchOverWorkers(kind: String) throws {
        let queue = try Self.prepare(kind)
        let submitted = try Batchrun.run(["submit", queue.location, "batch.yaml", "--fan-out", "load"], in: queue.folder.url)
        #expect(submitted.status == 0 && submitted.stdout.contains("queued batch 1: \(Self.partCount) parts of load"), "\(submitted.stdout)\(submitted.stderr)")
        // Nothing of the parts is queued before what they need is done.
        let before = try Self.batch(queue, 1)
        #expect((before["parts"] as? [String: Int]) == ["waiting": Self.partCount], "\(before)")
        #expect(Self.completionState(before) == "waiting")

        var workers = try (0..<3).map { _ in try Self.startWorker(queue) }
        defer { for worker in workers where worker.isRunning { kill(worker.processIdentifier, SIGKILL) } }
        // Once some parts are done, one worker dies with whatever it runs; another takes its place.
        #expect(try queue.wait { ((try Self.batch(queue, 1)["parts"] as? [String: Int])?["done"] ?? 0) >= 6 })
        kill(workers[0].processIdentifier, SIGKILL)
        workers[0].waitUntilExit()
        workers[0] = try Self.startWorker(queue)
        #expect(try queue.wait { Self.completionState(try Self.batch(queue, 1)) == "done" })
        for worker in workers { kill(worker.processIdentifier, SIGINT) }
        for worker in workers { worker.waitUntilExit() }

        try Self.expectLoadedOnce(queue)
        let batch = try Self.batch(queue, 1)
        #expect((batch["parts"] as? [String: Int]) == ["done": Self.partCount], "\(batch)")
        #expect(batch["rows"] as? Int == Self.partCount * Self.rowsPerPart, "\(batch)")
        #expect(batch["job"] as? String == "load")
        // 1 needs item, 24 parts, 1 completion: each done, each with its batch; each part names its part.
        let items = try queue.items().values.filter { $0["batch"] as? Int == 1 }
        #expect(items.count == Self.partCount + 2)
        #expect(items.allSatisfy { $0["state"] as? String == "done" }, "\(items)")
        let parts = items.compactMap { $0["part"] as? String }.sorted()
        #expect(parts == (0..<Self.partCount).map { queue.folder.path(String(format: "data/part-%03d.csv", $0)) })
        // A part's report names its part.
        let part = try #require(items.first { $0["part"] != nil })
        let key = (part["id"] as? Int).map(String.init) ?? part["name"] as? String ?? ""
        let report = try Batchrun.run(["queue", queue.location, "--report", key], in: queue.folder.url)
        #expect(report.stdout.contains("\"part\" : \"\(part["part"] as? String ?? "?")\""), "\(report.stdout)")
    }

    @Test("a failed part holds the batch (no completion) until it is retried and done; retrying a done item is refused",
          arguments: QueueFeatureTests.kinds)
    func failedPartHolds(kind: String) throws {
        let queue = try Self.prepare(kind)
        // A row already in the store with part 7's first key: part 7 fails on the conflict.
        let clash = 7 * Self.rowsPerPart + 1
        #expect(try Batchrun.run(["run", "batch.yaml", "--select", "prepare"], in: queue.folder.url).status == 0)
        if queue.isFolder {
            try CompressedFeedRunTests.program("sqlite3", [queue.folder.path("store.sqlite"),
                "INSERT INTO row VALUES (\(clash), 99); DELETE FROM started"])
        } else {
            _ = try PostgresServer.psql(queue.location, "INSERT INTO row VALUES (\(clash), 99); DELETE FROM started")
        }
        let submitted = try Batchrun.run(["submit", queue.location, "batch.yaml", "--fan-out", "load"], in: queue.folder.url)
        #expect(submitted.status == 0, "\(submitted.stderr)")
        let ended = try queue.worker(["--once"])
        #expect(ended.status == 1, "\(ended.stdout)\(ended.stderr)")
        var batch = try Self.batch(queue, 1)
        #expect((batch["parts"] as? [String: Int]) == ["done": Self.partCount - 1, "failed": 1], "\(batch)")
        #expect(Self.completionState(batch) == "waiting")
        #expect(try Self.query(queue, "SELECT count(*) FROM finish") == ["0"])
        // The whole listing's JSON has the batch too, as `--batch 1` shows it alone.
        let listed = try Batchrun.run(["queue", queue.location, "--format", "json"], in: queue.folder.url)
        let listing = try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any] ?? [:]
        let listedBatches = listing["batches"] as? [[String: Any]] ?? []
        #expect(listedBatches.count == 1 && listedBatches.first?["id"] as? Int == 1, "\(listed.stdout)")
        #expect(listedBatches.first?["parts"] as? [String: Int] == ["done": Self.partCount - 1, "failed": 1], "\(listed.stdout)")
        #expect(listedBatches.first?["rows"] as? Int == batch["rows"] as? Int && batch["rows"] as? Int == (Self.partCount - 1) * Self.rowsPerPart,
                "\(listed.stdout)")
        try Self.expectShownHeld(queue)

        // Retrying a done item changes nothing (exit 2, saying why).
        let items = try queue.items().values.filter { $0["batch"] as? Int == 1 }
        func key(_ item: [String: Any]) -> String { (item["id"] as? Int).map(String.init) ?? item["name"] as? String ?? "" }
        let done = try #require(items.first { $0["state"] as? String == "done" })
        let refused = try Batchrun.run(["retry", queue.location, key(done)], in: queue.folder.url)
        #expect(refused.status == 2 && refused.stderr.contains("is done: only a failed or cancelled item can be retried"), "\(refused.stderr)")

        // The clash removed, the failed part retried: it resumes, and the completion follows.
        if queue.isFolder {
            try CompressedFeedRunTests.program("sqlite3", [queue.folder.path("store.sqlite"), "DELETE FROM row WHERE part = 99"])
        } else {
            _ = try PostgresServer.psql(queue.location, "DELETE FROM row WHERE part = 99")
        }
        // Another group's failed items: none here, nothing changed.
        let otherGroup = try Batchrun.run(["retry", queue.location, "--failed", "--group", "other"], in: queue.folder.url)
        #expect(otherGroup.status == 0 && otherGroup.stdout.contains("no failed item to retry"), "\(otherGroup.stdout)\(otherGroup.stderr)")
        #expect((try Self.batch(queue, 1)["parts"] as? [String: Int])?["failed"] == 1)
        let retried = try Batchrun.run(["retry", queue.location, "--failed"], in: queue.folder.url)
        #expect(retried.status == 0 && retried.stdout.contains("retried "), "\(retried.stdout)\(retried.stderr)")
        let again = try queue.worker(["--once"])
        #expect(again.status == 0, "\(again.stdout)\(again.stderr)")
        batch = try Self.batch(queue, 1)
        #expect((batch["parts"] as? [String: Int]) == ["done": Self.partCount], "\(batch)")
        #expect(Self.completionState(batch) == "done", "\(batch)")
        try Self.expectLoadedOnce(queue)
    }

    @Test("parts moved away after submit: the needs item still runs and each part fails naming its own file (an item does not list the glob again); put back and retried, every row loads once and the completion follows",
          arguments: QueueFeatureTests.kinds)
    func partsGoneAfterSubmit(kind: String) throws {
        let queue = try Self.prepare(kind)
        let submitted = try Batchrun.run(["submit", queue.location, "batch.yaml", "--fan-out", "load"], in: queue.folder.url)
        #expect(submitted.status == 0, "\(submitted.stderr)")
        let data = queue.folder.path("data"), away = queue.folder.path("away")
        try FileManager.default.moveItem(atPath: data, toPath: away)
        let ended = try queue.worker(["--once"])
        #expect(ended.status == 1, "\(ended.stdout)\(ended.stderr)")
        // The needs item ran: its file loads without its glob matching anything now.
        #expect(try Self.query(queue, "SELECT count(*) FROM started") == ["1"])
        var batch = try Self.batch(queue, 1)
        #expect((batch["parts"] as? [String: Int]) == ["failed": Self.partCount], "\(batch)")
        // Each part failed on its own file, not on the glob.
        let parts = try queue.items().values.filter { $0["part"] != nil }
        #expect(parts.count == Self.partCount)
        for part in parts.prefix(3) {
            let key = (part["id"] as? Int).map(String.init) ?? part["name"] as? String ?? ""
            let log = try Batchrun.run(["queue", queue.location, "--log", key], in: queue.folder.url).stdout
            let file = (part["part"] as? String ?? "?").split(separator: "/").suffix(2).joined(separator: "/")
            #expect(log.contains("feed part \(file) changed since its batch was submitted (it is gone); put it back as it was and retry")
                    && !log.contains("matches nothing"), "\(log)")
        }

        try FileManager.default.moveItem(atPath: away, toPath: data)
        let retried = try Batchrun.run(["retry", queue.location, "--failed"], in: queue.folder.url)
        #expect(retried.status == 0, "\(retried.stdout)\(retried.stderr)")
        let again = try queue.worker(["--once"])
        #expect(again.status == 0, "\(again.stdout)\(again.stderr)")
        batch = try Self.batch(queue, 1)
        #expect(Self.completionState(batch) == "done", "\(batch)")
        try Self.expectLoadedOnce(queue)
    }

    @Test("a worker confined by --root refuses a part that leads outside its roots (a link out), naming where it leads, reading nothing of it; the other parts load",
          arguments: QueueFeatureTests.kinds)
    func partOutsideRoots(kind: String) throws {
        let queue = try Self.prepare(kind)
        let elsewhere = try TemporaryFolder()
        try elsewhere.write("secret.csv", "id,part\n999999,99\n")
        let link = queue.folder.path(String(format: "data/part-%03d.csv", Self.partCount))
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: elsewhere.path("secret.csv"))
        let submitted = try Batchrun.run(["submit", queue.location, "batch.yaml", "--fan-out", "load"], in: queue.folder.url)
        #expect(submitted.status == 0 && submitted.stdout.contains("\(Self.partCount + 1) parts of load"), "\(submitted.stdout)\(submitted.stderr)")
        let ended = try queue.worker(["--once", "--root", queue.folder.path(".")])
        #expect(ended.status == 2, "\(ended.stdout)\(ended.stderr)")
        let refused = try #require(try queue.items().values.first { ($0["part"] as? String) == link })
        let key = (refused["id"] as? Int).map(String.init) ?? refused["name"] as? String ?? ""
        let log = try Batchrun.run(["queue", queue.location, "--log", key], in: queue.folder.url).stdout
        #expect(log.contains("outside the folders this worker lets items touch") && log.contains(elsewhere.path("secret.csv")), "\(log)")
        #expect(try Self.query(queue, "SELECT count(*) FROM row WHERE part = 99") == ["0"])
        #expect(try Self.query(queue, "SELECT count(*) FROM row") == ["\(Self.partCount * Self.rowsPerPart)"])
    }

    /// The live page has the batch's bar at 23 of 24 parts, one failed, its completion waiting;
    /// a worker's metrics count the unfinished batch's parts per state.
    static func expectShownHeld(_ queue: QueueFeatureTests.TestQueue) throws {
        let (serve, port) = try LivePageTests.serve(queue.location, in: queue.folder)
        defer { serve.terminate(); serve.waitUntilExit() }
        let page = httpGet(port: port, path: "/")?.body ?? ""
        let row = page.components(separatedBy: "<tr data-batch=\"1\">").dropFirst().first?.components(separatedBy: "</tr>").first ?? ""
        #expect(row.contains("max=\"\(partCount)\" value=\"\(partCount - 1)\""), "\(page)")
        #expect(row.contains("1 failed") && row.contains("<td>load</td>") && row.contains("waiting"), "\(row)")
        // The rows so far: the 23 parts done (the failed one committed none).
        let rows = (partCount - 1) * rowsPerPart
        #expect(row.contains("<td class=\"n rows\">\(rows / 1_000),\(String(format: "%03d", rows % 1_000))</td>"), "\(row)")

        let output = queue.folder.url.appendingPathComponent("metrics-worker.out")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let worker = try Batchrun.start(["worker", queue.location, "--metrics", ":0"] + queue.workerOptions, in: queue.folder,
                                        output: try FileHandle(forWritingTo: output))
        defer { kill(worker.processIdentifier, SIGINT); worker.waitUntilExit() }
        var samples = PrometheusSamples("")
        let announced = try #require(metricsPort(announcedIn: output))
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if let (status, body) = httpGet(port: announced, path: "/metrics"), status == 200 {
                samples = PrometheusSamples(body)
                if samples.value("batchrun_batch_parts", ["state": "failed"]) == 1 { break }
            }
            Thread.sleep(forTimeInterval: 0.2)
        }
        #expect(samples.value("batchrun_batch_parts", ["state": "failed"]) == 1)
        #expect(samples.value("batchrun_batch_parts", ["state": "done"]) == Double(partCount - 1))
        #expect(samples.value("batchrun_batch_parts", ["state": "waiting"]) == 0)
    }

    @Test("--fan-out of a job that does not exist, or has no feed in parts, is exit 2 naming it; nothing is queued")
    func badFanOut() throws {
        let queue = try Self.prepare("folder")
        let missing = try Batchrun.run(["submit", "q", "batch.yaml", "--fan-out", "lod"], in: queue.folder.url)
        #expect(missing.status == 2 && missing.stderr.contains("has no job 'lod'") && missing.stderr.contains("load"), "\(missing.stderr)")
        let noGlob = try Batchrun.run(["submit", "q", "batch.yaml", "--fan-out", "finish"], in: queue.folder.url)
        #expect(noGlob.status == 2 && noGlob.stderr.contains("job finish has no feed in parts"), "\(noGlob.stderr)")
        try queue.folder.write("steps.yaml", try String(contentsOfFile: queue.folder.path("batch.yaml"), encoding: .utf8)
            .replacingOccurrences(of: "    batch_size: 50\n    steps:\n      - insert", with: "    batch_size: 50\n    steps:\n      - delete: { entity: Row, where: \"part = 7\" }\n      - insert"))
        let steps = try Batchrun.run(["submit", "q", "steps.yaml", "--fan-out", "load"], in: queue.folder.url)
        #expect(steps.status == 2 && steps.stderr.contains("job load has 2 steps, and each part's item would run every one of them"), "\(steps.stderr)")
        let twoFiles = try Batchrun.run(["submit", "q", "batch.yaml", "batch.yaml", "--fan-out", "load"], in: queue.folder.url)
        #expect(twoFiles.status == 2, "\(twoFiles.stderr)")
        #expect(try queue.items().isEmpty)
        #expect(!FileManager.default.fileExists(atPath: queue.folder.path("q/batches/1")))
    }
}

extension FanOutRunTests {
    @Test("the README's fan-out example: four parts over two workers, the summary once after them")
    func readmeExample() throws {
        let parts = try ReadmeExample(after: "**Feeds in parts.**")
        let example = try ReadmeExample(after: "**One load over many workers.**")
        let folder = try TemporaryFolder()
        try folder.copyFromPackage("examples")
        try folder.write("import_parts.yaml", parts.yaml)
        try folder.write("import_fanout.yaml", example.yaml)
        // The parts example's lines make the parts; then the fan-out example's.
        let script = (parts.shell + example.shell).replacingOccurrences(of: ".build/debug/batchrun", with: Batchrun.binary.path)
        let (status, printed) = try ReadmeExample.runShell(script, in: folder)
        #expect(status == 0, "\(printed)")
        #expect(printed.contains("queued batch 1: 4 parts of import_sessions"), "\(printed)")
        #expect(printed.contains("batch 1  import_sessions  4 parts: done 4  2,000 rows  completion ") && printed.contains(" done\n"), "\(printed)")
        let store = try StoreInspector(path: folder.path("var/fanout.sqlite"))
        #expect(try store.strings("SELECT id || ' ' || sessions FROM Summary") == ["1 2000"])
        #expect(try store.count("SELECT count(DISTINCT id) FROM Session") == 2_000)
    }
}

extension FanOutRunTests {
    @Test("--fan-out over S3 parts listed in two pages: each part one item, every row once; an object changed after the listing fails its part, put back and retried it loads")
    func s3Parts() throws {
        let moto = try MotoServer.shared
        let folder = try TemporaryFolder()
        try FeedPartsRunTests.prepareParts(folder)
        let bucket = try moto.bucket("fanout")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path("data")).filter { $0.hasPrefix("part-") }.sorted()
        for name in names { try moto.put(bucket: bucket, key: name, file: folder.path("data/\(name)")) }
        try moto.s3(["putmany", bucket, "part-002-note-", "1100"])   // the parts span two listing pages
        try folder.write("job.yaml", FeedJobs.singleFeed("s3://\(bucket)/part-*.csv*", batchSize: 500, extra: ", format: csv")
            .replacingOccurrences(of: "store: store.sqlite", with: "store: \(folder.path("store.sqlite"))"))
        let submitted = try Batchrun.run(["submit", "q", "job.yaml", "--fan-out", "csv"], in: folder.url, environment: moto.environment)
        #expect(submitted.status == 0 && submitted.stdout.contains("queued batch 1: 6 parts of csv"), "\(submitted.stdout)\(submitted.stderr)")
        // part-003 changes after the listing: its item refuses the object it finds.
        try folder.write("changed.csv", "id,v,note\n999999,1.5,changed\n")
        try moto.put(bucket: bucket, key: "part-003.csv", file: folder.path("changed.csv"))
        let first = try Batchrun.run(["worker", "q", "--workers", "2", "--once"], in: folder.url, environment: moto.environment)
        #expect(first.status == 1, "\(first.stdout)\(first.stderr)")
        let queue = try openQueue(at: folder.path("q"))
        #expect(try queue.batches().first?.parts == ["done": 5, "failed": 1])
        #expect(try FeedJobs.csvRows(folder).count == 5 * FeedPartsRunTests.rowsPerPart)

        try moto.put(bucket: bucket, key: "part-003.csv", file: folder.path("data/part-003.csv"))
        #expect(try Batchrun.run(["retry", "q", "--failed"], in: folder.url).status == 0)
        let again = try Batchrun.run(["worker", "q", "--once"], in: folder.url, environment: moto.environment)
        #expect(again.status == 0, "\(again.stdout)\(again.stderr)")
        #expect(try queue.batches().first?.parts == ["done": 6])
        try FeedPartsRunTests.expectAllRowsOnce(folder)
    }
}

extension FanOutRunTests {
    @Test("the last four parts ending at the same instant, each through a queue of its own: the completion is queued once (5 rounds)",
          arguments: QueueFeatureTests.kinds)
    func lastPartsAtOnce(kind: String) throws {
        for round in 1...5 {
            let queue = try Self.prepare(kind)
            let submitted = try Batchrun.run(["submit", queue.location, "batch.yaml", "--fan-out", "load"], in: queue.folder.url)
            #expect(submitted.status == 0, "\(submitted.stderr)")
            let location = queue.isFolder ? queue.folder.path("q") : queue.location
            let opened = try openQueue(at: location)
            // The needs item ends done (no run needed here): the parts are queued.
            let needs = try #require(try opened.claim(worker: "1@test", lease: 60))
            #expect(try opened.finish(needs, as: .done, status: 0, retryAt: nil))
            var parts: [QueueItem] = []
            while let part = try opened.claim(worker: "1@test", lease: 60) { parts.append(part) }
            #expect(parts.count == Self.partCount, "round \(round)")
            for part in parts.dropLast(4) { #expect(try opened.finish(part, as: .done, status: 0, retryAt: nil)) }

            // Four threads, each with its own queue (on PostgreSQL its own session), end the last four at once.
            let last = Array(parts.suffix(4))
            let ready = DispatchSemaphore(value: 0), go = DispatchSemaphore(value: 0), ended = DispatchGroup()
            let outcomes = Mutex<[String]>([])
            for part in last {
                ended.enter()
                Thread.detachNewThread {
                    defer { ended.leave() }
                    do {
                        let own = try openQueue(at: location)
                        ready.signal()
                        go.wait()
                        let finished = try own.finish(part, as: .done, status: 0, retryAt: nil)
                        outcomes.withLock { $0.append(finished ? "ended" : "lost") }
                    } catch {
                        ready.signal()
                        outcomes.withLock { $0.append("\(error)") }
                    }
                }
            }
            for _ in last { #expect(ready.wait(timeout: .now() + 60) == .success, "round \(round): a queue did not open") }
            for _ in last { go.signal() }
            #expect(ended.wait(timeout: .now() + 60) == .success, "round \(round): the four ends did not end")
            #expect(outcomes.withLock { $0 } == ["ended", "ended", "ended", "ended"], "round \(round)")
            // The needs item, 24 parts and one completion: not two.
            let items = try queue.items().values.filter { $0["batch"] as? Int == 1 }
            #expect(items.count == Self.partCount + 2, "round \(round): \(items.count) items")
            let batch = try Self.batch(queue, 1)
            #expect((batch["parts"] as? [String: Int]) == ["done": Self.partCount] && Self.completionState(batch) == "pending",
                    "round \(round): \(batch)")
        }
    }
}
