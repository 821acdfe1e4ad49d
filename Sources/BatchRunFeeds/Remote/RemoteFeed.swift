import Foundation

/// An `http://`, `https://` or `s3://` feed as the job file names it (section 14): the URL, the headers
/// sent with every request (`${env.VAR}` in values, resolved when the feed is opened), a CA
/// file trusted besides the system's, and timeouts. The URL's query string and the headers'
/// values may be secrets: nothing shows them; messages use `displayURL`.
package struct RemoteFeed: Sendable, Hashable {
    /// The URL as written, query string included (sent, never shown).
    package var url: String
    /// Header name to value as written (`Bearer ${env.TOKEN}`).
    package var headers: [String: String] = [:]
    /// A PEM file of certificates trusted besides the system's (`ca_file:`).
    package var caFile: String?
    /// Seconds to wait for a connection, and for the next bytes of a response.
    package var connectTimeout: Double = 10
    package var readTimeout: Double = 60
    /// Where `bad_rows: skip` writes the rejected rows: the job file's folder, with the name
    /// the URL's path ends with (`flights.csv.gz` gives `flights.rejected.csv` there).
    package var rejectedBase: String
    /// Where a confined worker's item may connect (`worker --allow-host`); nil: anywhere (a
    /// worker's own job files, a trusting worker's items).
    package var network: NetworkRules?
    /// The object's identity an import expects (set when it runs, from the first request or a
    /// checkpoint): a response for another object is an error.
    package var expected: RemoteIdentity?

    package init(url: String, rejectedBase: String) {
        self.url = url
        self.rejectedBase = rejectedBase
    }

    /// Where the feed is.
    package var location: FeedLocation { FeedLocation(url) }

    /// True for an `s3://` feed: its requests are signed (`S3RangedRequests`).
    package var isS3: Bool {
        switch location {
        case .s3, .s3WithoutObject: true
        case .file, .http: false
        }
    }

    /// The URL as messages, reports and run state show it: its query string replaced by `?…`
    /// (it often carries a token), its user and password dropped.
    package var displayURL: String { Self.redacted(url) }

    /// `https://user:pw@host/a.csv?sig=x#f` gives `https://host/a.csv?…`.
    package static func redacted(_ url: String) -> String {
        var text = url
        if let hash = text.firstIndex(of: "#") { text = String(text[..<hash]) }
        var query = ""
        if let mark = text.firstIndex(of: "?") {
            query = "?…"
            text = String(text[..<mark])
        }
        if let schemeEnd = text.range(of: "://") {
            let rest = text[schemeEnd.upperBound...]
            let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
            if let at = rest[..<authorityEnd].lastIndex(of: "@") {
                text = String(text[..<schemeEnd.upperBound]) + String(rest[rest.index(after: at)...])
            }
        }
        return text + query
    }

    /// The `${env.VAR}` names the header values use.
    package var environmentNames: [String] {
        headers.values.flatMap { Self.references(in: $0) }
    }

    /// The headers with each `${env.VAR}` replaced by the variable's value (empty when unset).
    package func resolvedHeaders(environment: [String: String] = ProcessInfo.processInfo.environment) -> [(name: String, value: String)] {
        headers.sorted { $0.key < $1.key }.map { name, value in
            var text = value
            for variable in Self.references(in: value) {
                text = text.replacingOccurrences(of: "${env.\(variable)}", with: environment[variable] ?? "")
            }
            return (name, text)
        }
    }

    /// The `${env.VAR}` names in one header value.
    package static func references(in value: String) -> [String] {
        var names: [String] = []
        var rest = Substring(value)
        while let start = rest.range(of: "${env.") {
            guard let end = rest[start.upperBound...].firstIndex(of: "}") else { break }
            names.append(String(rest[start.upperBound..<end]))
            rest = rest[rest.index(after: end)...]
        }
        return names
    }
}

extension RemoteFeed {
    /// Why a build without the `NetworkFeeds` trait refuses a remote feed.
    package static let notBuilt = "this batchrun was built without network feeds (the NetworkFeeds package trait is off); "
        + "download the file first (curl -fo data/feed.csv.gz URL) and name the local path, or build with the default traits"
}

extension RemoteFeed {
    /// The URL without its query string and fragment: what the format and compression suffixes
    /// are read from (`https://h/a.csv.gz?sig=x` gives `https://h/a.csv.gz`).
    package static func withoutQuery(_ url: String) -> String {
        String(url.prefix { $0 != "?" && $0 != "#" })
    }

    /// The `${env.VAR}` names the headers use that the environment does not set.
    package func unsetVariables(environment: [String: String] = ProcessInfo.processInfo.environment) -> [String] {
        environmentNames.filter { environment[$0] == nil }.sorted()
    }
}
