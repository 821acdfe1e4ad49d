#if NetworkFeeds
import Foundation

/// The objects of an `s3://BUCKET/PATTERN` glob (section 17): ListObjectsV2 from the pattern's
/// literal prefix, every page (`continuation-token`), each request signed as a feed's GET is
/// and sent through the same client, network rules and timeouts (`HTTPByteSource`); the keys
/// the pattern matches, in name order, with their sizes and ETags.
///
/// ```swift
/// let parts = try S3Listing.parts(of: feed, glob: FeedGlob("exports/2026-11-28/part-*.csv.gz")!)
/// parts.first?.name     // "s3://feeds/exports/2026-11-28/part-000.csv.gz"
/// ```
enum S3Listing {
    /// Keys a page asks for (S3's own default and most).
    static let pageSize = 1000

    /// The objects `glob` (a key pattern) matches in `feed`'s bucket.
    static func parts(of feed: RemoteFeed, glob: FeedGlob, watch: FeedWatch? = nil) throws(ByteSourceError) -> [FeedPart] {
        guard case .s3(let location) = feed.location else {
            throw ByteSourceError(message: "\(feed.displayURL) is not an s3:// location")
        }
        let requests: S3Requests
        do {
            requests = S3Requests(configuration: try S3Configuration(environment: ProcessInfo.processInfo.environment), location: S3Location(bucket: location.bucket, key: ""))
        } catch {
            throw ByteSourceError(message: error.message)
        }
        var listed: [String: FeedPart] = [:]
        var token: String?
        var seen = 0
        repeat {
            let page = ListPage(requests: requests, prefix: glob.literalPrefix, token: token)
            let body = try read(page, feed: feed, watch: watch)
            let objects = Self.objects(in: body)
            for object in objects {
                listed[object.key] = FeedPart(name: "s3://\(location.bucket)/\(object.key)", size: object.size, etag: object.etag)
            }
            seen += objects.count
            if seen > FeedGlob.maximumEntries {
                throw ByteSourceError(message: FeedGlobError.tooManyEntries(folder: page.displayName, limit: FeedGlob.maximumEntries).description)
            }
            guard S3Requests.element("IsTruncated", in: body) == "true" else { break }
            guard let next = S3Requests.element("NextContinuationToken", in: body), !next.isEmpty else {
                throw ByteSourceError(message: "\(page.displayName): the answer says there is more but gives no continuation token")
            }
            token = next
        } while true
        return glob.filter(Array(listed.keys)).compactMap { listed[$0] }
    }

    /// The most bytes one page's answer may have: 1,000 keys of S3's longest (1,024 bytes) with
    /// their XML are about 1.5 MB; an endpoint that sends more is refused, not held in memory.
    static let maximumPageBytes = 8 << 20

    /// One page's whole body.
    private static func read(_ page: ListPage, feed: RemoteFeed, watch: FeedWatch?) throws(ByteSourceError) -> String {
        let source = try HTTPByteSource(feed: feed, requests: page, watch: watch)
        defer { source.close() }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count: Int
            do {
                count = try chunk.withUnsafeMutableBytes { buffer in try source.read(into: buffer) }
            } catch let error as ByteSourceError {
                throw error
            } catch {
                throw ByteSourceError(message: "\(page.displayName): \(error)")
            }
            if count == 0 { break }
            bytes += chunk[..<count]
            guard bytes.count <= maximumPageBytes else {
                throw ByteSourceError(message: "\(page.displayName): a page of the listing is larger than \(maximumPageBytes >> 20) MB")
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The `<Contents>` of a ListObjectsV2 answer: key, size and ETag of each object. The keys
    /// come URL-encoded (`encoding-type=url`: XML cannot carry every character a key may hold).
    static func objects(in body: String) -> [(key: String, size: Int64, etag: String?)] {
        var objects: [(key: String, size: Int64, etag: String?)] = []
        var rest = body[...]
        let encoded = S3Requests.element("EncodingType", in: body) == "url"
        while let start = rest.range(of: "<Contents>"), let end = rest.range(of: "</Contents>", range: start.upperBound..<rest.endIndex) {
            let contents = String(rest[start.upperBound..<end.lowerBound])
            if let text = S3Requests.element("Key", in: contents), let key = encoded ? text.removingPercentEncoding : text {
                objects.append((key, Int64(S3Requests.element("Size", in: contents) ?? "") ?? 0, S3Requests.element("ETag", in: contents)))
            }
            rest = rest[end.upperBound...]
        }
        return objects
    }

    /// The GET of one page: `list-type=2`, the prefix, the page's token; signed anew each time.
    private struct ListPage: RangedRequestBuilder {
        let requests: S3Requests
        let prefix: String
        let token: String?

        var displayName: String { "the listing of s3://\(requests.location.bucket)/\(prefix)" }

        func request(from start: Int64, through end: Int64?, ifRange: String?) throws(ByteSourceError) -> RangedRequest {
            // In the order they are signed in (moto's check wants that; S3 takes any).
            var query = [(name: "encoding-type", value: "url"), (name: "list-type", value: "2"),
                         (name: "max-keys", value: String(S3Listing.pageSize)), (name: "prefix", value: prefix)]
            if let token { query.insert((name: "continuation-token", value: token), at: 0) }
            let signed = requests.signed(method: "GET", query: query)
            return RangedRequest(url: signed.url, headers: signed.headers)
        }

        func failure(status: Int, reason: String, body: String) -> String {
            requests.failure(status: status, body: body).replacingOccurrences(of: ", key \"\"", with: " (listing \(prefix)*)")
        }
    }
}
#endif
