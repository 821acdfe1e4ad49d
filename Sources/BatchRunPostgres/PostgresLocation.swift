#if PostgreSQL
import BatchRunStore
import Foundation
import Synchronization

/// Where a PostgreSQL store is and how to connect to it, read as libpq reads a connection: the
/// URL's parts and query keywords first (`PostgresURL`), then the service's (`service=` or
/// `PGSERVICE`, from `PostgresServiceFile`), then the environment's `PG*` variables, then
/// libpq's defaults (the Unix socket folder `/var/run/postgresql`, port 5432, the login's user
/// name, a database named after the user, `sslmode=prefer`, `connect_timeout` 10 s) and
/// `application_name` `batchrun`. The password never comes from the URL's text a job file holds:
/// it is the service's, else `PGPASSWORD`, else the matching line of `~/.pgpass` (or
/// `PGPASSFILE`), else none. The description names the server, user and database, never the
/// password.
///
/// ```swift
/// let location = try PostgresLocation(url: "postgresql:///nightly?host=/var/run/postgresql",
///                                     environment: ["PGUSER": "batch", "PGPORT": "5433"])
/// print(location)   // postgresql://batch@:5433/nightly?host=/var/run/postgresql
/// ```
package struct PostgresLocation: Sendable, CustomStringConvertible {
    /// The server's host name or address, or the folder of its Unix socket (it starts with `/`).
    package let host: String
    package let port: Int
    package let user: String
    package let database: String
    package let password: String?
    package let sslMode: PostgresSSLMode
    /// The CA certificates that verify the server's (a file), or `system` for the system's.
    package let sslRootCert: String
    /// The client certificate and its key, used when the certificate file exists.
    package let sslCert: String
    package let sslKey: String
    package let applicationName: String
    /// How long connecting may take, in seconds; nil waits as long as it takes (`connect_timeout=0`).
    package let connectTimeout: Double?

    /// libpq's default folder of the server's Unix socket (Debian's).
    static let defaultSocketFolder = "/var/run/postgresql"

    /// Environment variables by the keyword they give a value (libpq's).
    package static let variables = ["host": "PGHOST", "port": "PGPORT", "user": "PGUSER", "dbname": "PGDATABASE", "password": "PGPASSWORD",
                            "sslmode": "PGSSLMODE", "sslrootcert": "PGSSLROOTCERT", "sslcert": "PGSSLCERT", "sslkey": "PGSSLKEY",
                            "application_name": "PGAPPNAME", "connect_timeout": "PGCONNECT_TIMEOUT"]

    package init(url: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        do throws(PostgresURL.Problem) {
            try self.init(values: try Self.keywords(url: url, environment: environment), environment: environment)
        } catch {
            throw StoreError.cannotOpen(path: StoreSpec.redacted(url), reason: error.reason)
        }
    }

    /// libpq's keywords: the URL's, then the service's, then the environment's.
    private static func keywords(url: String, environment: [String: String]) throws(PostgresURL.Problem) -> [String: String] {
        var values = try PostgresURL(url).parameters
        if let service = values["service"] ?? environment["PGSERVICE"].flatMap({ $0.isEmpty ? nil : $0 }) {
            for (keyword, value) in try PostgresServiceFile.parameters(of: service, environment: environment) where values[keyword] == nil {
                values[keyword] = value
            }
        }
        for (keyword, variable) in variables where values[keyword] == nil {
            if let value = environment[variable], !value.isEmpty { values[keyword] = value }
        }
        return values
    }

    /// From libpq's keywords, defaults filled in.
    private init(values: [String: String], environment: [String: String]) throws(PostgresURL.Problem) {
        host = values["host"] ?? Self.defaultSocketFolder
        if host.contains(",") { throw PostgresURL.Problem(reason: "several hosts are not supported (host=\(host))") }
        guard let port = Int(values["port"] ?? "5432"), (1...65535).contains(port) else {
            throw PostgresURL.Problem(reason: "invalid port number: \"\(values["port"] ?? "")\"")
        }
        self.port = port
        user = values["user"] ?? environment["USER"].flatMap { $0.isEmpty ? nil : $0 } ?? Self.loginName() ?? "postgres"
        database = values["dbname"] ?? user
        let mode = values["sslmode"]
        guard let sslMode = PostgresSSLMode(rawValue: mode ?? "prefer") else {
            throw PostgresURL.Problem(reason: "invalid sslmode value: \"\(mode ?? "")\" (one of \(PostgresSSLMode.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? FileManager.default.homeDirectoryForCurrentUser.path
        sslRootCert = values["sslrootcert"] ?? home + "/.postgresql/root.crt"
        // As libpq (16 and later): the system's CAs are only worth anything with the host name checked.
        if sslRootCert == "system" && mode == nil {
            self.sslMode = .verifyFull
        } else if sslRootCert == "system" && sslMode != .verifyFull && !isSocket(host) {
            throw PostgresURL.Problem(reason: "weak sslmode \"\(sslMode.rawValue)\" may not be used with sslrootcert=system (use \"verify-full\")")
        } else {
            self.sslMode = sslMode
        }
        sslCert = values["sslcert"] ?? home + "/.postgresql/postgresql.crt"
        sslKey = values["sslkey"] ?? home + "/.postgresql/postgresql.key"
        applicationName = values["application_name"] ?? values["fallback_application_name"] ?? "batchrun"
        if let text = values["connect_timeout"] {
            guard let seconds = Int(text) else {
                throw PostgresURL.Problem(reason: "invalid integer value \"\(text)\" for connection option \"connect_timeout\"")
            }
            // libpq: 0 or less waits indefinitely; 1 is taken as 2.
            connectTimeout = seconds <= 0 ? nil : Double(max(seconds, 2))
        } else {
            connectTimeout = 10
        }
        password = values["password"]
            ?? Self.passFileEntry(host: host, port: port, database: database, user: user, environment: environment)
    }

    /// Connects through the Unix socket in folder `host`.
    package var isUnixSocket: Bool { isSocket(host) }

    /// The socket's path: `/var/run/postgresql/.s.PGSQL.5432`.
    package var socketPath: String { "\(host)/.s.PGSQL.\(port)" }

    /// `postgresql://USER@HOST:PORT/DB`, or `postgresql://USER@:PORT/DB?host=FOLDER` for a Unix
    /// socket: what messages and reports name. Never a password.
    package var description: String {
        if isUnixSocket { return "postgresql://\(user)@:\(port)/\(database)?host=\(host)" }
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "postgresql://\(user)@\(shownHost):\(port)/\(database)"
    }

    /// What tells a session made for this location from one made for another: the server,
    /// user and database, and how it was connected (TLS, certificates, application name).
    package var sessionKey: String {
        [description, sslMode.rawValue, sslRootCert, sslCert, sslKey, applicationName].joined(separator: "\u{1}")
    }

    /// What tells the database and credentials of a connection from another's: the server, user
    /// and database, and the connection's security (`sslmode`, certificate files); not the
    /// application name, which grants nothing.
    package var connectionIdentity: String {
        [description, sslMode.rawValue, sslRootCert, sslCert, sslKey].joined(separator: "\u{1}")
    }

    /// The login's user name, as libpq takes it when `PGUSER` is not set.
    private static func loginName() -> String? {
        guard let entry = getpwuid(geteuid()), let name = entry.pointee.pw_name else { return nil }
        return String(cString: name)
    }

    /// The password of the first matching line of `~/.pgpass` (or `PGPASSFILE`). As libpq: a
    /// Unix socket in the default folder matches the host `localhost`, one in another folder
    /// that folder; a file others may read or write (group or world access) is ignored, with a
    /// warning on standard error (once per file and process).
    static func passFileEntry(host: String, port: Int, database: String, user: String, environment: [String: String]) -> String? {
        let file = environment["PGPASSFILE"] ?? (environment["HOME"].map { $0 + "/.pgpass" } ?? "")
        var status = stat()
        if stat(file, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_mode & 0o077 != 0 {
            if warnedPassFiles.withLock({ $0.insert(file).inserted }) {
                Warning.emit("password file \"\(file)\" has group or world access; "
                    + "permissions should be u=rw (0600) or less: it is ignored (chmod 0600 \(file))")
            }
            return nil
        }
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { return nil }
        let matchedHost = host == defaultSocketFolder ? "localhost" : host
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            // Fields are separated by ':'; a '\' escapes the next character.
            var fields: [String] = [], field = "", escaped = false
            for character in line {
                if escaped { field.append(character); escaped = false } else if character == "\\" { escaped = true } else if character == ":" {
                    fields.append(field); field = ""
                } else { field.append(character) }
            }
            fields.append(field)
            guard fields.count == 5 else { continue }
            let wanted = [matchedHost, String(port), database, user]
            if zip(fields.prefix(4), wanted).allSatisfy({ $0 == "*" || $0 == $1 }) { return fields[4] }
        }
        return nil
    }
}

/// The password files warned about already (`PostgresLocation.passFileEntry`).
private let warnedPassFiles = Mutex<Set<String>>([])

/// A host that is a folder: a Unix socket's.
private func isSocket(_ host: String) -> Bool { host.hasPrefix("/") }
#endif
