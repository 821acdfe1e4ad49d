#if PostgreSQL
import Foundation

/// libpq's connection service file: INI sections named after services, each a list of
/// `keyword=value` lines of libpq's connection keywords (`#` starts a comment). The service's
/// values fill what the URL leaves empty, before the environment's. The file is `PGSERVICEFILE`,
/// else `~/.pg_service.conf`; a service not found there is looked for in the system's file
/// (`PGSYSCONFDIR/pg_service.conf`, by default Debian's `/etc/postgresql-common/pg_service.conf`).
///
/// ```swift
/// // ~/.pg_service.conf:
/// //   [nightly]
/// //   host=db.internal
/// //   dbname=nightly
/// try PostgresServiceFile.parameters(of: "nightly", environment: ProcessInfo.processInfo.environment)
/// // ["host": "db.internal", "dbname": "nightly"]
/// ```
enum PostgresServiceFile {
    /// The keywords of service `name`; throws when no file defines it, or the definition
    /// holds a keyword batchrun does not read.
    package static func parameters(of name: String, environment: [String: String]) throws(PostgresURL.Problem) -> [String: String] {
        var files: [String] = []
        if let file = environment["PGSERVICEFILE"], !file.isEmpty { files.append(file) } else if let home = environment["HOME"] {
            files.append(home + "/.pg_service.conf")
        }
        files.append((environment["PGSYSCONFDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/etc/postgresql-common") + "/pg_service.conf")
        for file in files {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { continue }
            if let found = try section(name, of: text, file: file) { return found }
        }
        throw PostgresURL.Problem(reason: "definition of service \"\(name)\" not found (in \(files.joined(separator: ", ")))")
    }

    /// The keywords of section `[name]` of an INI text, nil when it has no such section.
    package static func section(_ name: String, of text: String, file: String) throws(PostgresURL.Problem) -> [String: String]? {
        var current: String?
        var found: [String: String]?
        for (number, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("[") {
                if found != nil { break }   // the section ended
                current = line.hasSuffix("]") ? String(line.dropFirst().dropLast()) : nil
                if current == name { found = [:] }
                continue
            }
            guard current == name else { continue }
            guard let equals = line.firstIndex(of: "=") else {
                throw PostgresURL.Problem(reason: "syntax error in service file \"\(file)\", line \(number + 1)")
            }
            let keyword = line[..<equals].trimmingCharacters(in: .whitespaces)
            let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            // A password here is the user's own file, as ~/.pgpass is (libpq reads it too).
            guard PostgresURL.keywords.contains(keyword) || keyword == "password", keyword != "service" else {
                throw PostgresURL.Problem(reason: "service file \"\(file)\", line \(number + 1): \"\(keyword)\" is not a connection keyword batchrun supports")
            }
            if !value.isEmpty { found?[keyword] = value }
        }
        return found
    }
}
#endif
