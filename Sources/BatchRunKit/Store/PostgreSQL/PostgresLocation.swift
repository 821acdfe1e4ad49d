#if PostgreSQL
import Foundation

/// Where a PostgreSQL store is: `postgresql://USER@HOST:PORT/DB` (`postgres://` too). The
/// password never comes from the URL's text a job file holds: it is `PGPASSWORD`, else the
/// matching line of `~/.pgpass` (`host:port:database:user:password`, `*` matching anything),
/// else none.
///
/// ```swift
/// let location = try PostgresLocation(url: "postgresql://batch@db.internal:5432/nightly")
/// print(location)   // postgresql://batch@db.internal:5432/nightly
/// ```
struct PostgresLocation: Sendable, CustomStringConvertible {
    let host: String
    let port: Int
    let user: String
    let database: String
    let password: String?

    init(url: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        guard let parts = URLComponents(string: url), let scheme = parts.scheme, ["postgresql", "postgres"].contains(scheme),
              let host = parts.host, !host.isEmpty else {
            throw StoreError.cannotOpen(path: url, reason: "expected postgresql://USER@HOST:PORT/DATABASE")
        }
        if parts.password != nil {
            throw StoreError.cannotOpen(path: url, reason: "the URL holds a password: give it in PGPASSWORD or ~/.pgpass instead")
        }
        self.host = host
        port = parts.port ?? 5432
        user = parts.user ?? environment["PGUSER"] ?? environment["USER"] ?? "postgres"
        let path = parts.path.hasPrefix("/") ? String(parts.path.dropFirst()) : parts.path
        database = path.isEmpty ? user : path
        password = environment["PGPASSWORD"]
            ?? Self.passFileEntry(host: host, port: port, database: path.isEmpty ? user : path, user: user, environment: environment)
    }

    var description: String { "postgresql://\(user)@\(host):\(port)/\(database)" }

    /// The password of the first matching line of `~/.pgpass` (or `PGPASSFILE`).
    static func passFileEntry(host: String, port: Int, database: String, user: String, environment: [String: String]) -> String? {
        let file = environment["PGPASSFILE"] ?? (environment["HOME"].map { $0 + "/.pgpass" } ?? "")
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { return nil }
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
            let wanted = [host, String(port), database, user]
            if zip(fields.prefix(4), wanted).allSatisfy({ $0 == "*" || $0 == $1 }) { return fields[4] }
        }
        return nil
    }
}
#endif
