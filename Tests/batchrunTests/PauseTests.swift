import Foundation
import Testing
import TestSupport

/// `batchrun pause` and `resume` (JOBFILE.md 18) with three real workers on a queue folder and
/// on a real PostgreSQL: a paused queue claims nothing for several seconds, running items
/// finish, `resume` lets them run; a paused group's items wait while others run; `queue`, its
/// JSON and the metrics say so.
@Suite("pause and resume, end to end", .serialized)
struct PauseTests {
    static func states(_ queue: QueueFeatureTests.TestQueue) throws -> [String: String] {
        try queue.items().mapValues { $0["state"] as? String ?? "?" }
    }

    @Test("a paused queue: nothing claimed for 3 s by 3 workers, the listing and the metrics say so; paused midway, running items finish and no other starts; resumed, everything runs",
          arguments: QueueFeatureTests.kinds)
    func pauseQueue(kind: String) throws {
        let queue = try QueueFeatureTests.TestQueue(kind)
        try queue.folder.write("slow.yaml", GroupLimitTests.slowJob(queue, seconds: 1))
        let paused = try Batchrun.run(["pause", queue.location], in: queue.folder.url)
        #expect(paused.status == 0 && paused.stdout.contains("paused "), "\(paused.stdout)\(paused.stderr)")
        let first = try (0..<3).map { _ in try queue.submit("slow.yaml") }
        let workers = try GroupLimitTests.startWorkers(queue, count: 2)
        defer { for worker in workers where worker.isRunning { kill(worker.processIdentifier, SIGKILL) } }
        let output = queue.folder.url.appendingPathComponent("metrics-worker.out")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let metricsWorker = try Batchrun.start(["worker", queue.location, "--jobs", "1", "--metrics", ":0"] + queue.workerOptions
                                               + (queue.isFolder ? [] : ["--allow-hooks"]), in: queue.folder, output: try FileHandle(forWritingTo: output))
        defer { if metricsWorker.isRunning { kill(metricsWorker.processIdentifier, SIGKILL) } }
        Thread.sleep(forTimeInterval: 3)
        let waiting = try Self.states(queue)
        #expect(waiting.values.allSatisfy { $0 == "pending" }, "\(waiting)")
        let listed = try Batchrun.run(["queue", queue.location], in: queue.folder.url)
        #expect(listed.stdout.split(separator: "\n").first?.hasSuffix("(paused)") == true, "\(listed.stdout)")
        let json = try Batchrun.run(["queue", queue.location, "--format", "json"], in: queue.folder.url)
        let listing = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any] ?? [:]
        #expect(listing["paused"] as? Bool == true && (listing["paused_groups"] as? [String]) == [], "\(json.stdout)")
        let announced = try #require(metricsPort(announcedIn: output))
        #expect(PrometheusSamples(httpGet(port: announced, path: "/metrics")?.body ?? "").value("batchrun_queue_paused") == 1)

        // Resumed: they run. Paused again while some run: those finish, no other starts.
        let more = try (0..<6).map { _ in try queue.submit("slow.yaml") }
        #expect(try Batchrun.run(["resume", queue.location], in: queue.folder.url).status == 0)
        #expect(try queue.wait { try Self.states(queue).values.contains("running") })
        #expect(try Batchrun.run(["pause", queue.location], in: queue.folder.url).status == 0)
        Thread.sleep(forTimeInterval: 1)   // a claim under way as the pause came ends as it would
        let started = try Self.states(queue).filter { $0.value != "pending" }.keys
        #expect(try queue.wait { try !Self.states(queue).values.contains("running") })
        Thread.sleep(forTimeInterval: 3)
        let after = try Self.states(queue)
        #expect(Set(after.filter { $0.value != "pending" }.keys) == Set(started), "\(after)")
        #expect(after.values.contains("pending"), "some items wait: \(after)")
        #expect(try Batchrun.run(["resume", queue.location], in: queue.folder.url).status == 0)
        #expect(try queue.wait { try Self.states(queue).values.allSatisfy { $0 == "done" } })
        let ended = try Self.states(queue)
        #expect(Set(ended.keys) == Set(first + more))
        #expect(PrometheusSamples(try Self.metricsWhenResumed(port: announced)).value("batchrun_queue_paused") == 0)
        for worker in workers + [metricsWorker] { kill(worker.processIdentifier, SIGINT) }
        for worker in workers + [metricsWorker] { worker.waitUntilExit() }
    }

    /// The worker's metrics once they say the queue is not paused (they are recorded every 5 s).
    static func metricsWhenResumed(port: Int) throws -> String {
        let deadline = Date().addingTimeInterval(30)
        var body = ""
        while Date() < deadline {
            body = httpGet(port: port, path: "/metrics")?.body ?? ""
            if PrometheusSamples(body).value("batchrun_queue_paused") == 0 { break }
            Thread.sleep(forTimeInterval: 0.2)
        }
        return body
    }

    @Test("a paused group: its items wait while the others run; resumed, they run", arguments: QueueFeatureTests.kinds)
    func pauseGroup(kind: String) throws {
        let queue = try QueueFeatureTests.TestQueue(kind)
        try queue.folder.write("quick.yaml", GroupLimitTests.slowJob(queue, seconds: 0))
        let paused = try Batchrun.run(["pause", queue.location, "--group", "nightly"], in: queue.folder.url)
        #expect(paused.status == 0 && paused.stdout.contains("paused group nightly of "), "\(paused.stdout)\(paused.stderr)")
        let grouped = try (0..<2).map { _ in try queue.submit("quick.yaml", ["--group", "nightly"]) }
        let others = try (0..<2).map { _ in try queue.submit("quick.yaml") }
        let ran = try queue.worker(["--workers", "2"] + (queue.isFolder ? [] : ["--allow-hooks"]), until: { states in
            others.allSatisfy { states[$0] == "done" }
        })
        #expect(ran)
        Thread.sleep(forTimeInterval: 1)
        var states = try Self.states(queue)
        #expect(grouped.allSatisfy { states[$0] == "pending" }, "\(states)")
        let listed = try Batchrun.run(["queue", queue.location, "--format", "json"], in: queue.folder.url)
        #expect(listed.stdout.contains("\"paused\" : false") && listed.stdout.contains("\"paused_groups\" : [\n    \"nightly\"\n  ]"), "\(listed.stdout)")
        #expect(try Batchrun.run(["resume", queue.location, "--group", "nightly"], in: queue.folder.url).status == 0)
        let finished = try queue.worker(["--once"] + (queue.isFolder ? [] : ["--allow-hooks"]))
        #expect(finished.status == 0, "\(finished.stdout)\(finished.stderr)")
        states = try Self.states(queue)
        #expect((grouped + others).allSatisfy { states[$0] == "done" }, "\(states)")
    }
}

extension QueueFeatureTests.TestQueue {
    /// Runs a worker with `arguments` until `done` holds for the items' states (up to 60 s), then
    /// stops it (SIGINT); true when it held.
    func worker(_ arguments: [String], until done: ([String: String]) -> Bool) throws -> Bool {
        let worker = try Batchrun.start(["worker", location, "--jobs", "1", "--quiet"] + workerOptions + arguments, in: folder)
        defer {
            kill(worker.processIdentifier, SIGINT)
            worker.waitUntilExit()
        }
        return try wait { done(try items().mapValues { $0["state"] as? String ?? "?" }) }
    }
}
