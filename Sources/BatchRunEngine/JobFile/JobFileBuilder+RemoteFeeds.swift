import BatchRunFeeds
import Foundation

/// `from: https://...` or `from: s3://BUCKET/KEY` (section 14): the URL and the keys that go
/// with it, `headers` (HTTP only: S3 requests carry their signature), `ca_file`,
/// `connect_timeout` and `read_timeout`.
extension JobFileBuilder {
    static let remoteFeedKeys = ["headers", "ca_file", "connect_timeout", "read_timeout"]

    /// The remote feed `from:` names, or nil (with an error) when its keys are wrong or this
    /// build has no network feeds.
    func remoteFeed(_ url: String, _ node: YAMLNode, _ fields: Fields) -> RemoteFeed? {
        #if !NetworkFeeds
        reader.error(node, "from: \(RemoteFeed.notBuilt)")
        return nil
        #else
        let path = RemoteFeed.withoutQuery(url)
        let location = FeedLocation(url)
        if case .s3WithoutObject = location {
            reader.error(node, "from: \(url) names no object; write s3://BUCKET/KEY, the bucket's name letters, digits, ., - or _ (s3://feeds/2026/flights.csv.gz)")
            return nil
        }
        if case .s3 = location {
            if let headers = fields.keys["headers"] {
                reader.error(headers, "headers applies to an http:// or https:// feed; an s3:// feed is signed with the AWS "
                    + "credentials of the environment (AWS_ACCESS_KEY_ID, AWS_PROFILE), never named in the job file")
            }
        }
        guard let host = URL(string: url)?.host, !host.isEmpty else {
            reader.error(node, "from: \(RemoteFeed.redacted(url)) is not a URL with a host (http://HOST/PATH or https://HOST/PATH)")
            return nil
        }
        let name = FeedCompression.strip(path).split(separator: "/").last.map(String.init) ?? "feed"
        var feed = RemoteFeed(url: url, rejectedBase: resolve(name))
        if let headers = fields["headers"], !feed.isS3 {
            for (name, key, value) in reader.namedEntries(headers, "headers") {
                guard let text = reader.string(value, "header \(name)") else { continue }
                if name.contains(where: { $0 == ":" || $0 == " " || $0 == "\n" }) || name.isEmpty {
                    reader.error(key, "header name '\(name)' is not a valid HTTP header name")
                    continue
                }
                if text.contains("${"), !Self.onlyEnvironmentReferences(text) {
                    reader.error(value, "header \(name): a value may use ${env.VAR} references only")
                    continue
                }
                feed.headers[name] = text
                if let rules = loader.rules {
                    for refusal in RemoteFeed.references(in: text).compactMap(rules.environmentRefusal) {
                        reader.error(value, "header \(name): \(refusal)")
                    }
                }
            }
        }
        if let caNode = fields["ca_file"], let text = reader.string(caNode, "ca_file") {
            // Confined like a feed: a worker with --root reads no certificate file outside its roots.
            let caPath = confined(resolve(text), caNode, "ca_file")
            if loader.confinement?.violation(of: caPath) == nil, !FileManager.default.isReadableFile(atPath: caPath) {
                reader.error(caNode, "ca_file \(text) cannot be read (looked for \(caPath)); name a PEM file of CA certificates")
            }
            feed.caFile = caPath
        }
        if let network = loader.rules?.network {
            // Checked now, so the item is invalid before anything runs; checked again as each
            // request (and redirect) connects, where the address is pinned.
            feed.network = network
            if !feed.isS3, let (host, port) = NetworkRules.hostAndPort(of: url), let refusal = network.refusal(host: host, port: port) {
                reader.error(node, "from: \(feed.displayURL): \(refusal)")
            }
        }
        if let timeout = fields["connect_timeout"], let seconds = reader.duration(timeout, "connect_timeout") { feed.connectTimeout = seconds }
        if let timeout = fields["read_timeout"], let seconds = reader.duration(timeout, "read_timeout") { feed.readTimeout = seconds }
        return feed
        #endif
    }

    /// An error for each remote-feed key given with a local feed or inline rows.
    func refuseRemoteKeys(_ fields: Fields) {
        for key in Self.remoteFeedKeys {
            if let node = fields.keys[key] {
                reader.error(node, "\(key) applies to an http://, https:// or s3:// feed (from: https://...), not to a local file or inline rows")
            }
        }
    }

    private static func onlyEnvironmentReferences(_ text: String) -> Bool {
        var rest = Substring(text)
        while let start = rest.range(of: "${") {
            guard rest[start.upperBound...].hasPrefix("env."),
                  let end = rest[start.upperBound...].firstIndex(of: "}") else { return false }
            let name = rest[rest.index(start.upperBound, offsetBy: 4)..<end]
            guard JobFileLoader.isEnvironmentName(String(name)) else { return false }
            rest = rest[rest.index(after: end)...]
        }
        return true
    }
}
