import Foundation
import GRDB
import TestSupport

/// Runs `batchrun FILE --resume` again and again, killing the first `interruptions` attempts
/// with SIGKILL and SIGINT in turn, until the store's latest run ended ok. Every fourth kill
/// comes inside the process's start (20 to 60 ms); the others once the attempt committed a batch
/// (the run's rows grew), after a random further delay of up to half a share of `wholeRun`
/// (the seconds one uninterrupted run took on this machine, now). So the killed attempts move
/// the run on, and they are killed before it ends, on a fast machine or a busy one.
struct InterruptedRuns {
    var folder: TemporaryFolder
    var arguments: [String]
    var store = "store.sqlite"
    /// The store's URL when it is a PostgreSQL database (then `store` is not used).
    var postgres: String?
    var interruptions = 12
    var wholeRun: Double

    /// When set, an attempt that is not killed in its start is killed once the run's rows grew
    /// by a random 1 to `rowsPerAttempt` (polled every 5 ms), not after a random delay: each
    /// attempt then moves the run on by about that much, however much faster this machine runs
    /// now than when `wholeRun` was measured (a busy minute, then a quiet one, gave 4 attempts
    /// in place of 8).
    var rowsPerAttempt: Int?

    /// Called after each attempt that did not end the run ok (to look at the store between attempts).
    var afterAttempt: () throws -> Void = {}

    /// The random delay after an attempt's first committed batch.
    var delayAfterCommit: ClosedRange<Double> { 0...max(0.01, wholeRun / Double(2 * interruptions)) }

    /// How many attempts were interrupted, how many of those had committed rows before they
    /// were (the run's rows over all attempts grew), and whether the run ended ok within 60 attempts.
    func run() throws -> (interrupted: Int, committed: Int, endedOK: Bool) {
        var generator = SystemRandomNumberGenerator()
        var interrupted = 0, committed = 0
        var rows = 0
        for _ in 0..<60 {
            let process = Process()
            process.executableURL = Batchrun.binary
            process.arguments = arguments + ["--resume"]
            process.currentDirectoryURL = folder.url
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            if interrupted < interruptions {
                if interrupted % 4 == 3 {
                    Thread.sleep(forTimeInterval: Double.random(in: 0.02...0.06, using: &generator))
                } else {
                    // Polled every 20 ms, for at most a few whole runs, each time with a new read-only
                    // connection (one opened before the run's process has the store open may fail
                    // every read: SQLite cannot set up a WAL store's shared memory read-only).
                    let deadline = Date().addingTimeInterval(max(10, 4 * wholeRun))
                    let target = rows + (rowsPerAttempt.map { Int.random(in: 1...max(1, $0), using: &generator) } ?? 1)
                    while process.isRunning, Date() < deadline {
                        if let now = try? rowsSoFar(), now >= target { break }
                        Thread.sleep(forTimeInterval: rowsPerAttempt == nil ? 0.02 : 0.005)
                    }
                    if rowsPerAttempt == nil {
                        Thread.sleep(forTimeInterval: Double.random(in: delayAfterCommit, using: &generator))
                    }
                }
                if process.isRunning {
                    kill(process.processIdentifier, interrupted % 2 == 0 ? SIGKILL : SIGINT)
                    interrupted += 1
                }
            }
            process.waitUntilExit()
            // Done when the run ended ok, whatever the exit status says: a signal that arrives
            // after the run ended makes the process end by SIGINT all the same.
            if try latestStatus() == "ok" { return (interrupted, committed, true) }
            try afterAttempt()
            let now = try rowsSoFar()
            if now > rows { committed += 1 }
            rows = now
        }
        return (interrupted, committed, false)
    }

    /// The rows the store's latest run has written over all its attempts, by its checkpoints.
    func rowsSoFar() throws -> Int {
        if let postgres {
            // Tables named in a query must exist when it is parsed: asked first.
            guard try PostgresServer.psql(postgres, "SELECT to_regclass('_batchrun_progress') IS NOT NULL") == "t" else { return 0 }
            return Int(try PostgresServer.psql(postgres, """
                SELECT coalesce(sum(inserted + updated + deleted), 0) FROM _batchrun_progress
                WHERE run_id = (SELECT max(id) FROM _batchrun_runs)
                """)) ?? 0
        }
        guard FileManager.default.fileExists(atPath: folder.path(store)) else { return 0 }
        return try Self.reader(folder.path(store)).read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master WHERE name = '_batchrun_progress'") == 1
                ? try Int.fetchOne(db, sql: """
                    SELECT coalesce(sum(inserted + updated + deleted), 0) FROM _batchrun_progress
                    WHERE run_id = (SELECT max(id) FROM _batchrun_runs)
                    """) ?? 0 : 0
        }
    }

    /// The status of the store's latest run, if any was recorded.
    func latestStatus() throws -> String? {
        if let postgres {
            guard try PostgresServer.psql(postgres, "SELECT to_regclass('_batchrun_runs') IS NOT NULL") == "t" else { return nil }
            let status = try PostgresServer.psql(postgres, "SELECT status FROM _batchrun_runs ORDER BY id DESC LIMIT 1")
            return status.isEmpty ? nil : status
        }
        guard FileManager.default.fileExists(atPath: folder.path(store)) else { return nil }
        return try Self.reader(folder.path(store)).read { db in
            // sqlite_master read directly: GRDB's schema cache does not see another process's tables.
            try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master WHERE name = '_batchrun_runs'") == 1
                ? try String.fetchOne(db, sql: "SELECT status FROM _batchrun_runs ORDER BY id DESC LIMIT 1") : nil
        }
    }

    /// A read-only connection to the store (it fails while the store does not exist yet).
    static func reader(_ path: String) throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(30)
        return try DatabaseQueue(path: path, configuration: configuration)
    }
}
