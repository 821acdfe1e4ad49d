#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An IPv4 or IPv6 address a request would connect to, and what kind it is: a confined worker's
/// items reach only public ones unless `--allow-host` names them (JOBFILE.md section 15,
/// "Network"). An IPv6 address that carries an IPv4 one (mapped `::ffff:a.b.c.d`, compatible
/// `::a.b.c.d`, translated `::ffff:0:a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) is the
/// kind of the IPv4 address; a local NAT64 prefix (`64:ff9b:1::/48`) is private.
///
/// ```swift
/// NetworkAddress(numeric: "169.254.169.254")?.privateKind   // "link-local"
/// NetworkAddress.resolve("localhost")                       // [127.0.0.1, ::1]
/// ```
package struct NetworkAddress: Sendable, Hashable, CustomStringConvertible {
    /// 4 bytes (IPv4) or 16 (IPv6), in network order.
    package let bytes: [UInt8]

    package init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// `127.0.0.1` or `::1` (brackets allowed); nil for a name.
    package init?(numeric text: String) {
        var text = Substring(text)
        if text.hasPrefix("["), text.hasSuffix("]") { text = text.dropFirst().dropLast() }
        var v4 = in_addr(), v6 = in6_addr()
        if inet_pton(AF_INET, String(text), &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
        } else if inet_pton(AF_INET6, String(text), &v6) == 1 {
            bytes = withUnsafeBytes(of: &v6) { Array($0) }
        } else {
            return nil
        }
    }

    /// The addresses `host` resolves to (a name through the system's resolver, a numeric
    /// address as it is), in the order a connection would try them; empty when it resolves to
    /// none.
    package static func resolve(_ host: String) -> [NetworkAddress] {
        if let numeric = NetworkAddress(numeric: host) { return [numeric] }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0 else { return [] }
        defer { freeaddrinfo(list) }
        var addresses: [NetworkAddress] = []
        var node = list
        while let info = node?.pointee {
            if let socketAddress = info.ai_addr {
                switch info.ai_family {
                case AF_INET:
                    var address = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
                    addresses.append(NetworkAddress(bytes: withUnsafeBytes(of: &address) { Array($0) })!)
                case AF_INET6:
                    var address = socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
                    addresses.append(NetworkAddress(bytes: withUnsafeBytes(of: &address) { Array($0) })!)
                default:
                    break
                }
            }
            node = info.ai_next
        }
        var seen = Set<NetworkAddress>()
        return addresses.filter { seen.insert($0).inserted }
    }

    /// What makes it not public (`loopback`, `link-local`, `private`, `unspecified`,
    /// `multicast`, `reserved`), or nil for a public unicast address.
    package var privateKind: String? {
        if let embedded { return embedded.privateKind }
        if bytes.count == 4 { return Self.kind(ofIPv4: bytes) }
        let b = bytes
        if b.allSatisfy({ $0 == 0 }) { return "unspecified" }
        if b.dropLast().allSatisfy({ $0 == 0 }) && b[15] == 1 { return "loopback" }
        if b[0] == 0xfe && b[1] & 0xc0 == 0x80 { return "link-local" }
        if b[0] == 0xfe && b[1] & 0xc0 == 0xc0 { return "private" }          // fec0::/10, site-local
        if b[0] & 0xfe == 0xfc { return "private" }                          // fc00::/7, unique local
        if b[0] == 0xff { return "multicast" }
        if b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8 { return "reserved" }   // 2001:db8::/32
        if b[0] == 0x01 && b[1...7].allSatisfy({ $0 == 0 }) { return "reserved" }              // 100::/64, discard
        if [0x00, 0x64, 0xff, 0x9b, 0x00, 0x01].elementsEqual(b[0..<6]) { return "private" }   // 64:ff9b:1::/48, local NAT64
        return nil
    }

    /// The IPv4 address an IPv6 one carries, if any.
    private var embedded: NetworkAddress? {
        guard bytes.count == 16 else { return nil }
        let b = bytes
        let mapped = b[0..<10].allSatisfy { $0 == 0 } && b[10] == 0xff && b[11] == 0xff
        let compatible = b[0..<12].allSatisfy { $0 == 0 } && !(b[12] == 0 && b[13] == 0 && b[14] == 0 && b[15] <= 1)
        let nat64 = [0x00, 0x64, 0xff, 0x9b].elementsEqual(b[0..<4]) && b[4..<12].allSatisfy { $0 == 0 }
        let translated = b[0..<8].allSatisfy { $0 == 0 } && b[8] == 0xff && b[9] == 0xff && b[10] == 0 && b[11] == 0   // ::ffff:0:a.b.c.d
        if mapped || compatible || nat64 || translated { return NetworkAddress(bytes: Array(b[12..<16])) }
        if b[0] == 0x20 && b[1] == 0x02 { return NetworkAddress(bytes: Array(b[2..<6])) }        // 2002:V4ADDR::/48
        return nil
    }

    private static func kind(ofIPv4 b: [UInt8]) -> String? {
        switch (b[0], b[1]) {
        case (0, _): return "unspecified"                                  // 0.0.0.0/8 reaches this host
        case (127, _): return "loopback"
        case (169, 254): return "link-local"
        case (10, _), (192, 168): return "private"
        case (172, 16...31): return "private"
        case (100, 64...127): return "private"                            // shared address space (carrier NAT)
        case (192, 0) where b[2] == 0: return "reserved"                  // IETF protocol assignments
        case (198, 18...19): return "reserved"                            // benchmarking
        case (224...239, _): return "multicast"
        case (240...255, _): return "reserved"                            // 240/4 and the broadcast address
        default: return nil
        }
    }

    /// `127.0.0.1`, `::1`.
    package var description: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        var copy = bytes
        _ = copy.withUnsafeMutableBytes { raw in
            inet_ntop(bytes.count == 4 ? AF_INET : AF_INET6, raw.baseAddress, &text, socklen_t(text.count))
        }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
