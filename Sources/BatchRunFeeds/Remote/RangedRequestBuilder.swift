/// What one attempt at a remote feed's bytes sends: a GET of `url` with `headers`.
package struct RangedRequest: Sendable {
    package var url: String
    package var headers: [(name: String, value: String)]

    package init(url: String, headers: [(name: String, value: String)]) {
        self.url = url
        self.headers = headers
    }
}

/// Builds the GET for a remote feed's bytes from an offset, anew for every attempt (the first,
/// each retry after a broken transfer, a resumed run's), so a store that signs requests (S3)
/// signs each one, `Range` and `If-Range` included.
package protocol RangedRequestBuilder: Sendable {
    /// The feed as messages name it (no secret: no query string, no credentials).
    var displayName: String { get }
    /// The request for bytes `start...end` (`end` nil: to the end). `start` 0 with `end` nil
    /// asks for the whole object, without `Range`; `ifRange` (an ETag or a Last-Modified date)
    /// is sent as `If-Range`, so a changed object comes back whole (200), not as the range.
    func request(from start: Int64, through end: Int64?, ifRange: String?) throws(ByteSourceError) -> RangedRequest
    /// What a response with a status other than 2xx says, for the feed's error: the URL and
    /// status by default; S3 reads its error code from `body` (its first KB).
    func failure(status: Int, reason: String, body: String) -> String
}

extension RangedRequestBuilder {
    package func failure(status: Int, reason: String, body: String) -> String {
        "the server answered HTTP \(status) \(reason) for \(displayName)"
    }

    /// The `Range` and `If-Range` headers of a request from `start` through `end`.
    package static func rangeHeaders(from start: Int64, through end: Int64?, ifRange: String?) -> [(name: String, value: String)] {
        guard start > 0 || end != nil else { return [] }
        var headers = [(name: "Range", value: "bytes=\(start)-" + (end.map(String.init) ?? ""))]
        if let ifRange { headers.append((name: "If-Range", value: ifRange)) }
        return headers
    }
}

/// An `http(s)://` feed's requests: its URL, its `headers:` (env references resolved once, when
/// the feed is opened) and the range.
package struct PlainRangedRequests: RangedRequestBuilder {
    private let url: String
    private let headers: [(name: String, value: String)]
    package let displayName: String

    package init(feed: RemoteFeed) {
        url = feed.url
        headers = feed.resolvedHeaders()
        displayName = feed.displayURL
    }

    package func request(from start: Int64, through end: Int64?, ifRange: String?) throws(ByteSourceError) -> RangedRequest {
        RangedRequest(url: url, headers: headers + Self.rangeHeaders(from: start, through: end, ifRange: ifRange))
    }
}
