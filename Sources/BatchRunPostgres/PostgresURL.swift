#if PostgreSQL
import Foundation

/// A `postgresql://` (or `postgres://`) URL read as libpq reads it, into libpq's connection
/// keywords: `postgresql://[USER@][HOST][:PORT][/DBNAME][?KEYWORD=VALUE&...]`, every part
/// optional and percent-decoded. A host that is a folder (`?host=/var/run/postgresql`, or
/// `%2F...` in the host's place) is a Unix socket's folder. Query keywords are libpq's; those
/// batchrun does not implement are refused rather than ignored, and so is a password (it
/// belongs in `PGPASSWORD` or `~/.pgpass`, never in text a job file holds).
///
/// ```swift
/// try PostgresURL("postgresql:///nightly?host=/var/run/postgresql&sslmode=disable").parameters
/// // ["dbname": "nightly", "host": "/var/run/postgresql", "sslmode": "disable"]
/// ```
struct PostgresURL: Sendable {
    /// The keywords the URL gives a value (an empty part gives none).
    package let parameters: [String: String]

    /// The query keywords batchrun reads (libpq's names).
    static let keywords: Set<String> = ["host", "port", "user", "dbname", "sslmode", "sslrootcert", "sslcert", "sslkey",
                                        "application_name", "fallback_application_name", "connect_timeout", "service"]

    /// Why a URL is refused.
    package struct Problem: Error {
        package let reason: String
    }

    package init(_ text: String) throws(Problem) {
        guard let schemeEnd = text.range(of: "://"), ["postgresql", "postgres"].contains(text[..<schemeEnd.lowerBound]) else {
            throw Problem(reason: "expected postgresql://USER@HOST:PORT/DATABASE")
        }
        var rest = Substring(text[schemeEnd.upperBound...])
        var query: Substring = ""
        if let mark = rest.firstIndex(of: "?") { query = rest[rest.index(after: mark)...]; rest = rest[..<mark] }
        var path: Substring = ""
        if let slash = rest.firstIndex(of: "/") { path = rest[rest.index(after: slash)...]; rest = rest[..<slash] }
        var values: [String: String] = [:]
        func set(_ keyword: String, _ raw: Substring) throws(Problem) {
            guard let value = raw.removingPercentEncoding else { throw Problem(reason: "the URL's \(keyword) is not valid percent-encoding") }
            if !value.isEmpty { values[keyword] = value }
        }
        // USER[:PASSWORD]@ before the host.
        if let at = rest.firstIndex(of: "@") {
            let userInfo = rest[..<at]
            if userInfo.contains(":") {
                throw Problem(reason: "the URL holds a password: give it in PGPASSWORD or ~/.pgpass instead")
            }
            try set("user", userInfo)
            rest = rest[rest.index(after: at)...]
        }
        if rest.contains(",") { throw Problem(reason: "several hosts in one URL are not supported") }
        // [IPv6]:PORT or HOST:PORT.
        var host = rest, port: Substring = ""
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw Problem(reason: "the URL's IPv6 host lacks its ']'") }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if after.hasPrefix(":") { port = after.dropFirst() } else if !after.isEmpty {
                throw Problem(reason: "unexpected \"\(after)\" after the URL's IPv6 host")
            }
        } else if let colon = rest.firstIndex(of: ":") {
            host = rest[..<colon]
            port = rest[rest.index(after: colon)...]
        }
        try set("host", host)
        try set("port", port)
        try set("dbname", path)
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            guard let equals = pair.firstIndex(of: "=") else {
                throw Problem(reason: "the URL's query parameter \"\(pair)\" lacks its \"=\"")
            }
            let keyword = String(pair[..<equals])
            if keyword == "password" {
                throw Problem(reason: "the URL holds a password: give it in PGPASSWORD or ~/.pgpass instead")
            }
            guard Self.keywords.contains(keyword) else {
                throw Problem(reason: "the URL's query parameter \"\(keyword)\" is not one batchrun supports (\(Self.keywords.sorted().joined(separator: ", ")))")
            }
            try set(keyword, pair[pair.index(after: equals)...])
        }
        parameters = values
    }
}
#endif
