/// `HOST:PORT` for a server to listen on: `127.0.0.1:9464`, `[::1]:8080`, `0.0.0.0:8080`, or
/// `:9464` (loopback). Loopback unless a host says otherwise.
///
/// ```swift
/// ListenAddress("0.0.0.0:8080")?.isLoopback   // false
/// ```
package struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    package var host: String
    package var port: Int

    package init?(_ text: String) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else {
            return nil
        }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.isEmpty { host = "127.0.0.1" }
        if host.contains(":") && !text.hasPrefix("[") { return nil }   // an IPv6 host goes in brackets
        self.host = host
        self.port = port
    }

    /// Listens on this machine only (127.0.0.0/8, ::1, localhost).
    package var isLoopback: Bool {
        host.hasPrefix("127.") || host == "::1" || host == "localhost"
    }

    /// Every address of the machine (`0.0.0.0`, `::`): no one name the browser uses.
    package var isWildcard: Bool {
        host == "0.0.0.0" || host == "::" || host.isEmpty
    }

    package var description: String { "\(Self.host(host)):\(port)" }

    /// A host as a URL writes it (an IPv6 address in brackets).
    package static func host(_ host: String) -> String { host.contains(":") ? "[\(host)]" : host }
}
