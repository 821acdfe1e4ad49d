import Foundation
import GRDB

/// Runs `batchrun FILE --resume` again and again, killing the first `interruptions` attempts
/// with SIGKILL and SIGINT in turn at random moments, until the store's latest run ended ok.
/// The moments are drawn from a range scaled to `wholeRun` (the seconds one uninterrupted run
/// took on this machine, now), so the attempts that are killed do about half the work between
/// them and every one of them finds the run still going, on a fast machine or a busy one.
struct InterruptedRuns {
    var folder: TemporaryFolder
    var arguments: [String]
    var store = "store.sqlite"
    var interruptions = 12
    var wholeRun: Double

    /// From 20 ms (inside the process's start) to the whole run's share of one attempt, doubled.
    var delay: ClosedRange<Double> { 0.02...max(0.06, 2 * wholeRun / Double(interruptions)) }

    /// How many attempts were interrupted, and whether the run ended ok within 60 attempts.
    func run() throws -> (interrupted: Int, endedOK: Bool) {
        var generator = SystemRandomNumberGenerator()
        var interrupted = 0
        for _ in 0..<60 {
            let process = Process()
            process.executableURL = Batchrun.binary
            process.arguments = arguments + ["--resume"]
            process.currentDirectoryURL = folder.url
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            if interrupted < interruptions {
                Thread.sleep(forTimeInterval: Double.random(in: delay, using: &generator))
                if process.isRunning {
                    kill(process.processIdentifier, interrupted % 2 == 0 ? SIGKILL : SIGINT)
                    interrupted += 1
                }
            }
            process.waitUntilExit()
            // Done when the run ended ok, whatever the exit status says: a signal that arrives
            // after the run ended makes the process end by SIGINT all the same.
            if try latestStatus() == "ok" { return (interrupted, true) }
        }
        return (interrupted, false)
    }

    /// The status of the store's latest run, if any was recorded.
    func latestStatus() throws -> String? {
        var configuration = Configuration()
        configuration.busyMode = .timeout(30)
        return try DatabaseQueue(path: folder.path(store), configuration: configuration).read { db in
            // sqlite_master read directly: GRDB's schema cache does not see another process's tables.
            try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master WHERE name = '_batchrun_runs'") == 1
                ? try String.fetchOne(db, sql: "SELECT status FROM _batchrun_runs ORDER BY id DESC LIMIT 1") : nil
        }
    }
}
