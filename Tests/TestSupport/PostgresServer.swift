import Foundation

/// A throwaway PostgreSQL server for this test process, started at first use by
/// `Tests/TestSupport/pg-throwaway.sh` (a free port on 127.0.0.1, a temporary folder, trust
/// authentication). The script's watchdog stops it and removes its folder once this process is
/// gone, also when it was killed. Each test takes a database of its own. A test that needs a
/// server set up otherwise (TLS, password logins) starts a `Cluster` of its own.
public enum PostgresServer {
    /// The server's binaries (the newest installed PostgreSQL).
    public static let binaries: String = {
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        let newest = versions.compactMap(Int.init).max().map(String.init) ?? "15"
        return "\(root)/\(newest)/bin"
    }()

    private static let started: Result<String, any Error> = Result {
        let output = try run("/bin/bash", [script, "start", "--owner", String(getpid())])
        guard let url = output.split(separator: "\n").last.map(String.init), url.hasPrefix("postgresql://") else {
            throw ServerError(message: "pg-throwaway.sh printed no URL: \(output)")
        }
        return url
    }

    /// A cluster of a test's own, with its own settings: `start(settings:hba:files:)`.
    public struct Cluster: Sendable {
        /// The cluster's folder; its Unix socket is there (`.s.PGSQL.PORT`).
        public let folder: String
        public let port: Int
        /// `postgresql://postgres@127.0.0.1:PORT/postgres`.
        public let url: String

        /// Runs SQL through `psql` as `postgres` over the Unix socket (`pg_hba.conf` must let
        /// `local all postgres` in, e.g. `trust`), in `database`; its output.
        @discardableResult
        public func psql(_ sql: String, database: String = "postgres") throws -> String {
            try PostgresServer.run("\(PostgresServer.binaries)/psql", ["host=\(folder) port=\(port) user=postgres dbname=\(database)", "-v", "ON_ERROR_STOP=1", "-X", "-q", "-t", "-A", "-c", sql])
        }

        /// Stops the server as a restart does (`pg_ctl stop -m fast`: sessions are ended, the
        /// batch in flight rolled back), keeping its folder; `resume()` starts it again.
        public func halt() throws {
            _ = try PostgresServer.run("/bin/bash", [PostgresServer.script, "halt", folder])
        }

        /// Starts the server `halt()` stopped: the same port and data.
        public func resume() throws {
            _ = try PostgresServer.run("/bin/bash", [PostgresServer.script, "resume", folder])
        }

        /// A new, empty database on this cluster; its URL.
        public func database(_ name: String) throws -> String {
            try psql("CREATE DATABASE \(name)")
            return String(url.dropLast("postgres".count)) + name
        }

        /// Stops the server and removes its folder (the watchdog does it too when the test process ends).
        public func stop() throws {
            _ = try PostgresServer.run("/bin/bash", [PostgresServer.script, "stop", folder])
        }
    }

    /// Starts a cluster of the test's own: `settings` added to its `postgresql.conf`, `hba`
    /// (when given) as its `pg_hba.conf`, the files of folder `files` copied into its data folder
    /// (mode 0600, so a server key is accepted; name them relative to it in `settings`).
    ///
    /// ```swift
    /// let cluster = try PostgresServer.start(settings: ["ssl = on"], hba: ["local all postgres trust", "hostssl all all 127.0.0.1/32 scram-sha-256"], files: certificates)
    /// defer { try? cluster.stop() }
    /// ```
    public static func start(settings: [String] = [], hba: [String]? = nil, files: String? = nil) throws -> Cluster {
        let temporary = FileManager.default.temporaryDirectory.appendingPathComponent("pg-settings-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: temporary) }
        var arguments = [script, "start", "--owner", String(getpid())]
        let conf = temporary.appendingPathComponent("postgresql.conf")
        try (settings.joined(separator: "\n") + "\n").write(to: conf, atomically: true, encoding: .utf8)
        arguments += ["--conf", conf.path]
        if let hba {
            let file = temporary.appendingPathComponent("pg_hba.conf")
            try (hba.joined(separator: "\n") + "\n").write(to: file, atomically: true, encoding: .utf8)
            arguments += ["--hba", file.path]
        }
        if let files { arguments += ["--files", files] }
        let lines = try run("/bin/bash", arguments).split(separator: "\n").map(String.init)
        guard lines.count >= 2, let url = lines.last, url.hasPrefix("postgresql://"),
              let port = url.split(separator: ":").last?.split(separator: "/").first.flatMap({ Int($0) }) else {
            throw ServerError(message: "pg-throwaway.sh printed no folder and URL: \(lines)")
        }
        return Cluster(folder: lines[lines.count - 2], port: port, url: url)
    }

    private static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("pg-throwaway.sh").path

    /// The server's URL (its `postgres` database).
    public static var url: String {
        get throws { try started.get() }
    }

    /// A new, empty database on the server; its URL.
    public static func database(_ prefix: String = "t") throws -> String {
        let server = try url
        let name = "\(prefix)_\(UInt32.random(in: .min ... .max))"
        try psql(server, "CREATE DATABASE \(name)")
        return String(server.dropLast("postgres".count)) + name
    }

    /// Runs SQL through `psql` (an outside writer), stopping at the first error; its output.
    @discardableResult
    public static func psql(_ url: String, _ sql: String) throws -> String {
        try run("\(binaries)/psql", [url, "-v", "ON_ERROR_STOP=1", "-X", "-q", "-t", "-A", "-c", sql])
    }

    /// Makes every statement that inserts into `url`'s table `table` hold its transaction
    /// `seconds` longer (a statement trigger that sleeps, added by an event trigger when the
    /// table is created, so before a run's first batch). A test that must catch a run mid-batch
    /// on any machine slows the batches inside the server: on a fast one a whole import ran
    /// between two looks, on a busy one the feed's reader, not the server, was the slow side.
    public static func slowInserts(_ url: String, table: String, seconds: Double) throws {
        try psql(url, """
            CREATE FUNCTION public.slow_batch() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN PERFORM pg_sleep(\(seconds)); RETURN NULL; END $$;
            CREATE FUNCTION public.slow_batches() RETURNS event_trigger LANGUAGE plpgsql AS $$
            BEGIN
              IF to_regclass('public.\(table)') IS NOT NULL
                 AND NOT EXISTS (SELECT FROM pg_trigger WHERE tgname = 'slow_batch' AND tgrelid = to_regclass('public.\(table)')) THEN
                CREATE TRIGGER slow_batch AFTER INSERT ON public.\(table) FOR EACH STATEMENT EXECUTE FUNCTION public.slow_batch();
              END IF;
            END $$;
            CREATE EVENT TRIGGER slow_batches ON ddl_command_end WHEN TAG IN ('CREATE TABLE')
            EXECUTE FUNCTION public.slow_batches();
            """)
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which Swift's Glibc
    /// module does not declare; nil where the C library has none.
    private static let addCloseFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()

    /// Runs a program and waits for it with `posix_spawn` and `waitpid` (Foundation's `Process`
    /// missed the exit of the start script inside this static initializer and waited forever).
    static func run(_ executable: String, _ arguments: [String]) throws -> String {
        var output: [Int32] = [0, 0]
        guard pipe(&output) == 0 else { throw ServerError(message: "pipe: \(errno)") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, output[1], 1)
        posix_spawn_file_actions_adddup2(&actions, output[1], 2)
        posix_spawn_file_actions_addclose(&actions, output[0])
        posix_spawn_file_actions_addclose(&actions, output[1])
        // Nothing else of the test process goes with it: the server it starts lives on, and a
        // named pipe a test held open at that moment (its write end) never reached its end.
        _ = addCloseFrom?(&actions, 3)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        close(output[1])
        defer { close(output[0]) }
        guard spawned == 0 else { throw ServerError(message: "cannot run \(executable): \(spawned)") }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(output[0], &buffer, buffer.count)
            if count > 0 { bytes += buffer[0..<count] } else if count == 0 || errno != EINTR { break }
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard status == 0 else {
            throw ServerError(message: "\(executable) \(arguments.joined(separator: " ")) failed (\(status)): \(text)")
        }
        return text
    }

    public struct ServerError: Error, CustomStringConvertible {
        let message: String
        public var description: String { message }

        /// A test's own failure to set a server up.
        public static func failed(_ message: String) -> ServerError { ServerError(message: message) }
    }
}
