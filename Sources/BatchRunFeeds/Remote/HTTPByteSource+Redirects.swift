#if NetworkFeeds
import Foundation

/// A remote feed's redirects (section 14, and section 15's "Network" for a confined item):
/// at most 5; only to `http://` or `https://`, never from `https` down to `http`; the feed's
/// `headers:` (and an S3 signature) go only to the origin they were written for: on a redirect
/// to another scheme, host or port only `Range` and `If-Range` are sent on.
extension HTTPByteSource {
    static let maxRedirects = 5

    /// The `Location` of a redirect (301, 302, 303, 307, 308), or nil.
    static func redirectLocation(status: Int, headers: [(name: String, value: String)]) -> String? {
        guard [301, 302, 303, 307, 308].contains(status) else { return nil }
        return headers.first { $0.name.lowercased() == "location" }?.value
    }

    /// The request a redirect from `request` to `location` (relative or absolute) sends; throws
    /// when the redirect is refused, naming it without its query string.
    static func redirect(_ request: RangedRequest, to location: String, displayName: String) throws(ByteSourceError) -> RangedRequest {
        let shown = RemoteFeed.redacted(location)
        guard let base = URL(string: request.url), let target = URL(string: location, relativeTo: base)?.absoluteURL,
              let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = target.host, !host.isEmpty else {
            throw ByteSourceError(message: "\(displayName) redirects to \(shown), which is not an http:// or https:// URL")
        }
        if base.scheme?.lowercased() == "https" && scheme == "http" {
            throw ByteSourceError(message: "\(displayName) redirects from https to http (\(RemoteFeed.redacted(target.absoluteString))): "
                + "refused, the feed would come unencrypted; name the https:// URL it should come from")
        }
        let headers = origin(of: base) == origin(of: target)
            ? request.headers
            : request.headers.filter { ["range", "if-range"].contains($0.name.lowercased()) }
        var url = target.absoluteString
        if let hash = url.firstIndex(of: "#") { url = String(url[..<hash]) }
        return RangedRequest(url: url, headers: headers)
    }

    /// `https://example.com:443`: scheme, host and port, the port the scheme's own when unsaid.
    static func origin(of url: URL) -> String {
        let scheme = url.scheme?.lowercased() ?? ""
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\((url.host ?? "").lowercased()):\(port)"
    }
}
#endif
