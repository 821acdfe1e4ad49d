import Foundation
import TestSupport
import Testing

/// A confined worker's network (JOBFILE.md section 15, "A confined worker": network), end to end
/// with the real binary, a folder queue with `--root`, and real HTTP servers on 127.0.0.1,
/// 127.0.0.2 and ::1: a feed on a loopback, link-local, unspecified or private address is
/// refused before anything runs, whatever way the URL spells it; each redirect is checked
/// where it leads; `--allow-host` lets a host in; no https-to-http redirect; `headers:` stay
/// with their origin.
@Suite("A confined worker: the network")
struct ConfinedNetworkTests {
    static let secret = "s3cr3t-internal-value"

    /// A folder with `inside/served/feed.csv` (a row carrying `secret`) and a server for it.
    static func serving(host: String = "127.0.0.1", certificate: (certificate: String, key: String)? = nil,
                        in folder: TemporaryFolder) throws -> HTTPFeedServer {
        try folder.write("inside/served/feed.csv", "id,n\n1,2\n3,\(secret.count)\n")
        return try HTTPFeedServer(root: folder.path("inside/served"), certificate: certificate?.certificate, key: certificate?.key,
                                  host: host)
    }

    /// Submits one item per URL to `inside/q`, importing the URL's feed (`extra`: more keys of the insert).
    static func submit(_ urls: [String], extra: String = "", in folder: TemporaryFolder) throws {
        for (index, url) in urls.enumerated() {
            let file = "inside/item\(index).yaml"
            try folder.write(file, """
                version: 1
                store: ../store\(index).sqlite
                entities:
                  Row: { columns: { id: integer primary key, n: integer } }
                jobs:
                  load:
                    steps:
                      - insert: { entity: Row, from: "\(url)"\(extra.isEmpty ? "" : ", \(extra)") }
                """)
            let submitted = try Batchrun.run(["submit", "inside/q", file], in: folder.url)
            #expect(submitted.status == 0, "\(submitted.stderr)")
        }
    }

    @Test("a feed on a loopback, link-local or unspecified address is refused before any request, however the URL spells it; --allow-host lets one in")
    func addressesRefused() throws {
        let folder = try TemporaryFolder()
        let server = try Self.serving(in: folder)
        defer { server.stop() }
        let port = server.port
        let refused = [
            ("http://127.0.0.1:\(port)/feed.csv", "127.0.0.1 is a loopback address", "--allow-host 127.0.0.1:\(port)"),
            ("http://localhost:\(port)/feed.csv", "localhost is 127.0.0.1, a loopback address", "--allow-host localhost:\(port)"),
            ("http://2130706433:\(port)/feed.csv", "2130706433 is 127.0.0.1, a loopback address", "--allow-host 2130706433:\(port)"),
            ("http://[::ffff:127.0.0.1]:\(port)/feed.csv", "[::ffff:127.0.0.1] is a loopback address", "--allow-host [::ffff:127.0.0.1]:\(port)"),
            ("http://0.0.0.0:\(port)/feed.csv", "0.0.0.0 is an unspecified address", "--allow-host 0.0.0.0:\(port)"),
            ("http://169.254.169.254/latest/meta-data.csv", "169.254.169.254 is a link-local address", "--allow-host 169.254.169.254:80"),
            ("http://10.1.2.3:\(port)/feed.csv", "10.1.2.3 is a private address", "--allow-host 10.1.2.3:\(port)"),
            ("http://[::1]:\(port)/feed.csv", "[::1] is a loopback address", "--allow-host [::1]:\(port)"),
            ("http://[fe80::1]:\(port)/feed.csv", "[fe80::1] is a link-local address", "--allow-host [fe80::1]:\(port)"),
        ]
        try Self.submit(refused.map(\.0), in: folder)
        let worked = try Batchrun.run(["worker", "inside/q", "--once", "--root", "inside"], in: folder.url)
        #expect(worked.status == 2, "invalid items: \(worked.stdout)\(worked.stderr)")
        let log = ItemLimitTests.log("failed", folder)
        for (_, reason, option) in refused {
            #expect(log.contains(reason), "\(reason)\n\(log)")
            #expect(log.contains(option), "\(option)")
        }
        #expect(log.components(separatedBy: "nothing was run").count - 1 == refused.count, "\(log)")
        #expect(server.requests.isEmpty, "\(server.requests)")
        #expect(!log.contains(Self.secret))

        // Allowed by its address, the name localhost resolves to it too; any other port stays refused.
        try Self.submit(["http://127.0.0.1:\(port)/feed.csv", "http://localhost:\(port)/feed.csv",
                         "http://127.0.0.1:\(port == 65_535 ? 1 : port + 1)/feed.csv"], in: folder)
        let allowed = try Batchrun.run(["worker", "inside/q", "--once", "--root", "inside", "--allow-host", "127.0.0.1:\(port)"],
                                       in: folder.url)
        #expect(allowed.status == 2, "\(allowed.stdout)\(allowed.stderr)")
        let done = try FileManager.default.contentsOfDirectory(atPath: folder.path("inside/q/done")).filter { $0.hasSuffix(".yaml") }
        #expect(done.count == 2, "\(done)")
        #expect(try StoreInspector(path: folder.path("inside/store0.sqlite")).count("SELECT count(*) FROM Row") == 2)
        #expect(try StoreInspector(path: folder.path("inside/store1.sqlite")).count("SELECT count(*) FROM Row") == 2)
        #expect(server.requests.count >= 2)
    }

    @Test("every redirect is checked where it leads: to a refused address, from https to http, to a file: all fail, the target never asked")
    func redirectsChecked() throws {
        let folder = try TemporaryFolder()
        try folder.write("inside/.keep", "")
        let (certificate, key) = try HTTPFeedServer.makeCertificate(in: folder.path("inside"))
        let front = try Self.serving(in: folder)
        let secure = try Self.serving(certificate: (certificate, key), in: folder)
        let inner = try Self.serving(host: "127.0.0.2", in: folder)
        defer { front.stop(); secure.stop(); inner.stop() }
        front.redirect("/to-inner.csv", to: "\(inner.url)/feed.csv")
        front.redirect("/to-file.csv", to: "file:///etc/passwd")
        secure.redirect("/down.csv", to: "\(front.url)/feed.csv")
        try Self.submit(["\(front.url)/to-inner.csv", "\(front.url)/to-file.csv"], in: folder)
        try Self.submit(["https://localhost:\(secure.port)/down.csv"], extra: "ca_file: ../server-cert.pem", in: folder)
        let worked = try Batchrun.run(["worker", "inside/q", "--once", "--root", "inside", "--allow-host", "127.0.0.1"], in: folder.url)
        #expect(worked.status == 1, "\(worked.stdout)\(worked.stderr)")
        let log = ItemLimitTests.log("failed", folder)
        #expect(log.contains("127.0.0.2 is a loopback address"), "\(log)")
        #expect(log.contains("--allow-host 127.0.0.2:\(inner.port)"))
        #expect(log.contains("redirects to file:///etc/passwd, which is not an http:// or https:// URL"), "\(log)")
        #expect(log.contains("redirects from https to http"), "\(log)")
        #expect(inner.requests.isEmpty, "\(inner.requests)")
        #expect(!front.requests.contains { $0.uri == "/feed.csv" }, "the https item went on to http: \(front.requests)")
        #expect(secure.requests.count == 1, "the TLS server was reached by the name localhost, its certificate checked")
        #expect(!log.contains(Self.secret))
    }

    @Test("headers: go with a redirect within the origin and are dropped on one to another host or port; TLS by a name works with the address pinned")
    func headersStayWithTheirOrigin() throws {
        let folder = try TemporaryFolder()
        try folder.write("inside/.keep", "")
        let (certificate, key) = try HTTPFeedServer.makeCertificate(in: folder.path("inside"))
        let front = try Self.serving(certificate: (certificate, key), in: folder)
        let other = try Self.serving(host: "127.0.0.2", certificate: (certificate, key), in: folder)
        defer { front.stop(); other.stop() }
        front.redirect("/moved.csv", to: "/feed.csv")
        front.redirect("/away.csv", to: "\(other.url)/feed.csv")
        // https to http is refused: the other origin here is https on another port of localhost.
        let elsewhere = try Self.serving(certificate: (certificate, key), in: folder)
        defer { elsewhere.stop() }
        front.redirect("/away-tls.csv", to: "https://localhost:\(elsewhere.port)/feed.csv")
        try Self.submit(["https://localhost:\(front.port)/moved.csv", "https://localhost:\(front.port)/away-tls.csv",
                         "https://localhost:\(front.port)/away.csv"],
                        extra: "ca_file: ../server-cert.pem, headers: { X-Api-Key: key-123 }", in: folder)
        let worked = try Batchrun.run(["worker", "inside/q", "--once", "--root", "inside", "--allow-host", "localhost",
                                       "--allow-host", "127.0.0.2:\(other.port)"], in: folder.url)
        #expect(worked.status == 0, "\(worked.stdout)\(worked.stderr)")
        let onFront = front.requests
        #expect(onFront.contains { $0.uri == "/feed.csv" } && onFront.contains { $0.uri == "/away-tls.csv" }, "\(onFront)")
        #expect(onFront.allSatisfy { $0.header("X-Api-Key") == "key-123" }, "within its origin the header goes on")
        #expect(!elsewhere.requests.isEmpty)
        #expect(elsewhere.requests.allSatisfy { $0.header("X-Api-Key") == nil }, "\(elsewhere.requests.map(\.headers))")
        #expect(!other.requests.isEmpty && other.requests.allSatisfy { $0.header("X-Api-Key") == nil }, "\(other.requests.map(\.headers))")
        #expect(try StoreInspector(path: folder.path("inside/store1.sqlite")).count("SELECT count(*) FROM Row") == 2)
        #expect(try StoreInspector(path: folder.path("inside/store2.sqlite")).count("SELECT count(*) FROM Row") == 2)
    }

    @Test("IPv6: a server on ::1 is refused, and reached with --allow-host [::1]:PORT; a bad --allow-host is exit 2")
    func ipv6() throws {
        let folder = try TemporaryFolder()
        let server = try Self.serving(host: "::1", in: folder)
        defer { server.stop() }
        try Self.submit([server.url + "/feed.csv"], in: folder)
        let refused = try Batchrun.run(["worker", "inside/q", "--once", "--root", "inside", "--allow-host", "127.0.0.1"], in: folder.url)
        #expect(refused.status == 2)
        #expect(ItemLimitTests.log("failed", folder).contains("[::1] is a loopback address"))
        #expect(server.requests.isEmpty)
        try Self.submit([server.url + "/feed.csv"], in: folder)
        let allowed = try Batchrun.run(["worker", "inside/q", "--once", "--root", "inside", "--allow-host", "[::1]:\(server.port)"],
                                       in: folder.url)
        #expect(allowed.status == 0, "\(allowed.stdout)\(allowed.stderr)")
        #expect(!server.requests.isEmpty)
        let bad = try Batchrun.run(["worker", "inside/q", "--once", "--root", "inside", "--allow-host", "http://x/"], in: folder.url)
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("--allow-host takes HOST, HOST:PORT or [IPV6]:PORT, found 'http://x/'"), "\(bad.stderr)")
        let unconfined = try Batchrun.run(["worker", "inside/q", "--once", "--allow-host", "127.0.0.1"], in: folder.url)
        #expect(unconfined.status == 2)
        #expect(unconfined.stderr.contains("--item-role and the --max-* limits are for a confined worker"), "\(unconfined.stderr)")
    }

    @Test("an s3:// bucket name that would make another host (s3://attacker.example#/x.csv) is refused before anything is signed or sent")
    func bucketNamesChecked() throws {
        let folder = try TemporaryFolder()
        for (index, url) in ["s3://attacker.example#/x.csv", "s3://user@evil:9/x.csv", "s3://a?b/x.csv"].enumerated() {
            try folder.write("job\(index).yaml", """
                version: 1
                store: store.sqlite
                entities:
                  Row: { columns: { id: integer primary key } }
                jobs:
                  load:
                    steps:
                      - insert: { entity: Row, from: "\(url)", format: csv }
                """)
            let checked = try Batchrun.run(["check", "job\(index).yaml"], in: folder.url)
            #expect(checked.status == 2 && checked.stderr.contains("names no object; write s3://BUCKET/KEY, the bucket's name letters"),
                    "\(url): \(checked.stderr)")
        }
    }
}
