/// A host a confined worker's items may reach although its address is not public
/// (`worker --allow-host HOST[:PORT]`): a name or an address, IPv6 in brackets when a port
/// follows, and without a port every port of it.
///
/// ```swift
/// AllowedHost(parsing: "minio.internal:9000")   // minio.internal, port 9000
/// AllowedHost(parsing: "[::1]:8080")             // ::1, port 8080
/// AllowedHost(parsing: "10.0.0.7")               // 10.0.0.7, any port
/// ```
package struct AllowedHost: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The name or address, lowercased, without brackets.
    package var host: String
    package var port: Int?

    /// Nil when `text` is not `HOST`, `HOST:PORT`, `[IPV6]` or `[IPV6]:PORT`.
    package init?(parsing text: String) {
        var host = Substring(text.lowercased())
        var port: Int?
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return nil }
            let rest = host[host.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":"), let number = Int(rest.dropFirst()) else { return nil }
                port = number
            }
            host = host[host.index(after: host.startIndex)..<close]
            guard host.contains(":") else { return nil }
        } else if host.filter({ $0 == ":" }).count == 1, let colon = host.firstIndex(of: ":") {
            guard let number = Int(host[host.index(after: colon)...]) else { return nil }
            port = number
            host = host[..<colon]
        }
        if let port, !(1...65_535).contains(port) { return nil }
        guard !host.isEmpty, !host.contains(where: { $0 == "/" || $0 == "@" || $0 == " " || $0 == "[" || $0 == "]" }) else { return nil }
        self.host = String(host)
        self.port = port
    }

    /// True when it names `name` (as the URL writes it) or `address` (where that resolved to),
    /// and `port` unless it names no port.
    package func allows(name: String, address: NetworkAddress, port: Int) -> Bool {
        if let allowedPort = self.port, allowedPort != port { return false }
        if host == name.lowercased() { return true }
        return NetworkAddress(numeric: host) == address
    }

    /// `HOST:PORT`, IPv6 in brackets; `HOST` without a port.
    package var description: String {
        let shown = host.contains(":") ? "[\(host)]" : host
        return port.map { "\(shown):\($0)" } ?? shown
    }
}
