/// `s3://BUCKET/KEY` taken apart.
package struct S3Location: Sendable, Hashable, CustomStringConvertible {
    package var bucket: String
    package var key: String

    /// Nil unless `url` is `s3://` with a bucket and a key (read through `FeedLocation`, the
    /// one place a scheme is told apart). A bucket's name is at most 63 letters, digits, `.`, `-`
    /// and `_`: it becomes part of a host name (`BUCKET.s3.REGION.amazonaws.com`), so no `#`,
    /// `@`, `:` or `?` in it can make the request, signed with the worker's credentials, go to
    /// another host.
    package init?(url: String) {
        guard url.lowercased().hasPrefix("s3://") else { return nil }
        let rest = url.dropFirst(5)
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        bucket = String(rest[..<slash])
        key = String(rest[rest.index(after: slash)...])
        if key.isEmpty || !(1...63).contains(bucket.count) { return nil }
        guard bucket.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || ".-_".unicodeScalars.contains($0)) })
        else { return nil }
    }

    /// A bucket and key already checked (a listing's bucket, with no key).
    package init(bucket: String, key: String) {
        self.bucket = bucket
        self.key = key
    }

    package var description: String { "s3://\(bucket)/\(key)" }
}

/// Where an S3 request goes: `scheme://host` and the decoded path (`SigV4Signer.Request.path`).
package struct S3Address: Sendable, Equatable {
    package var scheme: String
    package var host: String
    package var path: String

    package init(scheme: String, host: String, path: String) {
        self.scheme = scheme
        self.host = host
        self.path = path
    }
}
