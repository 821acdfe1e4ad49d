#if NetworkFeeds
import AsyncHTTPClient
import Foundation

extension NetworkRules {
    /// `configuration` for requests to `url`'s host and port: the host's address checked
    /// (`address(for:port:)`) and, for a name, the client pinned to it (`dnsOverride`), so it
    /// connects to the address checked; TLS still checks the certificate against the name.
    func pinned(_ configuration: HTTPClient.Configuration, for url: String) throws(ByteSourceError) -> HTTPClient.Configuration {
        guard let (host, port) = Self.hostAndPort(of: url) else {
            throw ByteSourceError(message: "\(RemoteFeed.redacted(url)) is not a URL with a host")
        }
        let address = try address(for: host, port: port)
        var pinned = configuration
        if NetworkAddress(numeric: host) == nil { pinned.dnsOverride = [host: address.description] }
        return pinned
    }

    /// `https://[::1]:8443/a` gives `("::1", 8443)`; the scheme's port when the URL names none.
    package static func hostAndPort(of url: String) -> (host: String, port: Int)? {
        guard let parsed = URL(string: url), var host = parsed.host, !host.isEmpty else { return nil }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return (host, parsed.port ?? (parsed.scheme?.lowercased() == "https" ? 443 : 80))
    }
}
#endif
