import Foundation
import Testing
import TestSupport

/// `batchrun schedule` on both queue kinds, through the real binary: each due time queued once
/// by any number of workers (also killed and restarted), a missed due time queued once when a
/// worker starts, the schedule file checked. Time runs faster for the workers (the test-only
/// clock variables), so two minute boundaries take seconds.
@Suite("Queue schedules")
struct QueueScheduleTests {
    typealias TestQueue = QueueFeatureTests.TestQueue

    /// The due times of the items schedule `name` queued, as `YYYYMMDDTHHMMSS` stamps (one per item).
    static func dueTimes(_ queue: TestQueue, _ name: String) throws -> [String] {
        if queue.isFolder {
            return try queue.items().values.filter { $0["schedule"] as? String == name }.compactMap { $0["name"] as? String }
                .map { String($0.prefix(15)) }.sorted()
        }
        let listed = try PostgresServer.psql(queue.location, """
            SELECT string_agg(to_char(scheduled_for AT TIME ZONE 'UTC', 'YYYYMMDD"T"HH24MISS'), ',' ORDER BY scheduled_for)
            FROM _batchrun_queue WHERE schedule = '\(name)'
            """)
        return listed.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespacesAndNewlines) }
    }

    @Test("* * * * * with three workers over minute boundaries, then all killed and restarted: exactly one item per due time", arguments: QueueFeatureTests.kinds)
    func everyMinuteManyWorkers(kind: String) throws {
        let queue = try TestQueue(kind)
        try queue.folder.write("tick.yaml", QueueFeatureTests.tagJob(store: queue.folder.path("tags.sqlite")))
        // Every worker's clock runs 20 times faster from the same moment: a minute every 3 s.
        let clock = ["BATCHRUN_TEST_CLOCK_ANCHOR": String(Date().timeIntervalSince1970), "BATCHRUN_TEST_CLOCK_SCALE": "20"]
        let added = try Batchrun.run(["schedule", queue.location, "tick.yaml", "--cron", "* * * * *", "--name", "tick", "--param", "tag=t"],
                                     in: queue.folder.url, environment: clock)
        #expect(added.status == 0 && added.stdout.contains("scheduled tick"), "\(added.stdout)\(added.stderr)")
        func startWorkers() throws -> [Process] {
            try (0..<3).map { _ in
                let process = Process()
                process.executableURL = Batchrun.binary
                process.arguments = ["worker", queue.location, "--quiet", "--jobs", "1"] + queue.workerOptions
                process.currentDirectoryURL = queue.folder.url
                process.environment = ProcessInfo.processInfo.environment.merging(clock) { $1 }
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                try process.run()
                return process
            }
        }
        var workers = try startWorkers()
        defer { for worker in workers where worker.isRunning { kill(worker.processIdentifier, SIGKILL) } }
        #expect(try queue.wait { try Self.dueTimes(queue, "tick").count >= 3 })   // two boundaries crossed after the first
        for worker in workers { kill(worker.processIdentifier, SIGKILL) }
        for worker in workers { worker.waitUntilExit() }
        let beforeKill = try Self.dueTimes(queue, "tick")
        Thread.sleep(forTimeInterval: 7)   // more than two minutes of the workers' clock pass with none running
        workers = try startWorkers()
        #expect(try queue.wait { try Self.dueTimes(queue, "tick").count >= beforeKill.count + 2 })
        for worker in workers { kill(worker.processIdentifier, SIGINT) }
        for worker in workers { worker.waitUntilExit() }
        let due = try Self.dueTimes(queue, "tick")
        #expect(Set(due).count == due.count, "a due time queued twice: \(due)")
        #expect(due.allSatisfy { $0.hasSuffix("00") }, "\(due)")   // whole minutes
        // The minutes missed while none ran were not queued (only the latest of them).
        let minutes = due.compactMap { QueueFeatureTests.parseStamp($0).map { Int($0.timeIntervalSince1970 / 60) } }
        #expect(minutes.count == due.count && zip(minutes, minutes.dropFirst()).allSatisfy { $1 > $0 }, "\(due)")
        #expect(minutes.last! - minutes.first! + 1 > due.count, "\(due)")
    }

    @Test("a due time missed while no worker ran is queued once (only the latest) when one starts; the file is checked; --list and --remove", arguments: QueueFeatureTests.kinds)
    func missedAndManaged(kind: String) throws {
        let queue = try TestQueue(kind)
        try queue.folder.write("bad.yaml", "version: 1\nstore: x.sqlite\nentities: {}\njobs: { x: { needs: nope, steps: [] } }\n")
        let refused = try Batchrun.run(["schedule", queue.location, "bad.yaml", "--cron", "@hourly"], in: queue.folder.url)
        #expect(refused.status == 2, "\(refused.stdout)\(refused.stderr)")
        try queue.folder.write("hourly.yaml", QueueFeatureTests.tagJob(store: queue.folder.path("tags.sqlite")))
        let badCron = try Batchrun.run(["schedule", queue.location, "hourly.yaml", "--cron", "61 * * * *"], in: queue.folder.url)
        #expect(badCron.status == 2 && badCron.stderr.contains("minute '61'"), "\(badCron.stderr)")
        let added = try Batchrun.run(["schedule", queue.location, "hourly.yaml", "--cron", "@hourly", "--tz", "Europe/Berlin"], in: queue.folder.url)
        #expect(added.status == 0, "\(added.stdout)\(added.stderr)")
        let listed = try Batchrun.run(["schedule", queue.location, "--list"], in: queue.folder.url)
        #expect(listed.stdout.contains("hourly  @hourly  Europe/Berlin  next 20"), "\(listed.stdout)")
        #expect(try Batchrun.run(["queue", queue.location], in: queue.folder.url).stdout.contains("schedules\n  hourly  @hourly"))

        // Nothing due yet; then five hours later (none ran meanwhile): the latest hour once.
        #expect(try queue.worker(["--once"]).status == 0)
        #expect(try Self.dueTimes(queue, "hourly").isEmpty)
        let later = ["BATCHRUN_TEST_CLOCK_OFFSET": "18000"]
        #expect(try queue.worker(["--once"], environment: later).status == 0)
        #expect(try queue.worker(["--once"], environment: later).status == 0)
        let due = try Self.dueTimes(queue, "hourly")
        #expect(due.count == 1, "\(due)")
        let done = try queue.items().values.filter { $0["schedule"] as? String == "hourly" }.map { $0["state"] as? String }
        #expect(done == ["done"])

        #expect(try Batchrun.run(["schedule", queue.location, "--remove", "hourly"], in: queue.folder.url).status == 0)
        #expect(try Batchrun.run(["schedule", queue.location, "--remove", "hourly"], in: queue.folder.url).status == 2)
        #expect(try queue.worker(["--once"], environment: ["BATCHRUN_TEST_CLOCK_OFFSET": "36000"]).status == 0)
        #expect(try Self.dueTimes(queue, "hourly").count == 1)
    }
}
