/// `s3://BUCKET/KEY` taken apart.
struct S3Location: Sendable, Hashable, CustomStringConvertible {
    var bucket: String
    var key: String

    /// Nil unless `url` is `s3://` with a bucket and a key.
    init?(url: String) {
        guard url.lowercased().hasPrefix("s3://") else { return nil }
        let rest = url.dropFirst(5)
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        bucket = String(rest[..<slash])
        key = String(rest[rest.index(after: slash)...])
        if bucket.isEmpty || key.isEmpty { return nil }
    }

    var description: String { "s3://\(bucket)/\(key)" }
}

/// Where an S3 request goes: `scheme://host` and the decoded path (`SigV4Signer.Request.path`).
struct S3Address: Sendable, Equatable {
    var scheme: String
    var host: String
    var path: String
}
