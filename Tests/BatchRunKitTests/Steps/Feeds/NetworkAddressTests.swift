import Testing
@testable import BatchRunFeeds

/// What a confined worker takes for a public address (JOBFILE.md section 15, "Network"): every
/// loopback, link-local, private, unspecified, multicast and reserved form, IPv4 and IPv6,
/// IPv4 carried in IPv6 included; and what `--allow-host` parses.
@Suite("Network addresses a confined item may reach")
struct NetworkAddressTests {
    @Test("each kind of address not public is named; public ones pass", arguments: [
        ("127.0.0.1", "loopback"), ("127.255.0.9", "loopback"), ("::1", "loopback"),
        ("169.254.169.254", "link-local"), ("fe80::1", "link-local"),
        ("10.0.0.1", "private"), ("172.16.5.4", "private"), ("172.31.255.255", "private"), ("192.168.1.1", "private"),
        ("100.64.0.1", "private"), ("fd00::1", "private"), ("fc12::9", "private"), ("fec0::1", "private"),
        ("0.0.0.0", "unspecified"), ("0.1.2.3", "unspecified"), ("::", "unspecified"),
        ("224.0.0.1", "multicast"), ("ff02::1", "multicast"), ("255.255.255.255", "reserved"), ("2001:db8::1", "reserved"),
        // IPv4 inside IPv6: mapped, compatible, translated (SIIT), NAT64, 6to4; a local NAT64 prefix.
        ("::ffff:127.0.0.1", "loopback"), ("::ffff:169.254.169.254", "link-local"), ("::10.0.0.1", "private"),
        ("::ffff:0:192.168.0.1", "private"), ("64:ff9b::a9fe:a9fe", "link-local"), ("2002:7f00:1::", "loopback"),
        ("64:ff9b:1::808:808", "private"),
        ("93.184.216.34", nil), ("172.32.0.1", nil), ("100.128.0.1", nil), ("2606:4700::1111", nil), ("::ffff:8.8.8.8", nil),
        ("64:ff9b::808:808", nil),
    ] as [(String, String?)])
    func kinds(address: String, kind: String?) throws {
        let parsed = try #require(NetworkAddress(numeric: address))
        #expect(parsed.privateKind == kind, "\(address)")
    }

    @Test("a name resolves through the system's resolver; a number spelt as one integer is an address too")
    func resolving() {
        #expect(NetworkAddress.resolve("localhost").contains(NetworkAddress(numeric: "127.0.0.1")!))
        #expect(NetworkAddress.resolve("2130706433") == [NetworkAddress(numeric: "127.0.0.1")!])
        #expect(NetworkAddress.resolve("[::1]") == [NetworkAddress(numeric: "::1")!])
        #expect(NetworkAddress.resolve("no-such-host.invalid").isEmpty)
    }

    @Test("--allow-host takes HOST, HOST:PORT, [IPV6] and [IPV6]:PORT, and nothing else")
    func allowedHosts() throws {
        let minio = try #require(AllowedHost(parsing: "MinIO.internal:9000"))
        #expect(minio.host == "minio.internal" && minio.port == 9000 && minio.description == "minio.internal:9000")
        let v6 = try #require(AllowedHost(parsing: "[::1]:8080"))
        #expect(v6.host == "::1" && v6.port == 8080 && v6.description == "[::1]:8080")
        #expect(AllowedHost(parsing: "::1")?.port == nil)
        #expect(AllowedHost(parsing: "10.0.0.7")?.port == nil)
        for bad in ["", "http://x/", "host:0", "host:70000", "host:port", "[::1", "[10.0.0.1]", "a b", "user@host"] {
            #expect(AllowedHost(parsing: bad) == nil, "\(bad)")
        }
        // By name or by the address it resolves to, on its port only.
        let loopback = NetworkAddress(numeric: "127.0.0.1")!
        #expect(AllowedHost(parsing: "127.0.0.1:80")!.allows(name: "localhost", address: loopback, port: 80))
        #expect(!AllowedHost(parsing: "127.0.0.1:80")!.allows(name: "localhost", address: loopback, port: 81))
        #expect(AllowedHost(parsing: "localhost")!.allows(name: "LOCALHOST", address: loopback, port: 5432))
    }

    @Test("the refusal names the address, its kind and the option that would allow it")
    func refusal() throws {
        let rules = NetworkRules()
        #expect(rules.refusal(host: "169.254.169.254", port: 80)
                == "169.254.169.254 is a link-local address: this worker's items reach only public addresses and the hosts named "
                + "with --allow-host (none were); start the worker with --allow-host 169.254.169.254:80 to let items reach it")
        #expect(rules.refusal(host: "93.184.216.34", port: 443) == nil)
        #expect(rules.refusal(host: "no-such-host.invalid", port: 80) == nil, "a name that does not resolve fails when it is requested")
        #expect(throws: ByteSourceError.self) { try rules.address(for: "localhost", port: 80) }
        let allowed = NetworkRules(allowedHosts: [AllowedHost(parsing: "localhost:8080")!])
        #expect(try allowed.address(for: "localhost", port: 8080) == NetworkAddress(numeric: "127.0.0.1"))
    }
}
