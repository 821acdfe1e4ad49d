import Foundation
import GRDB
import Testing
import TestSupport

/// Remote feeds (section 14) imported by the real binary from `HTTPFeedServer`, a small HTTP
/// server the tests start on 127.0.0.1: each format and compression gives the tables the local
/// files give; a connection broken mid-feed is resumed by a Range request; a killed import
/// resumes with `Range: bytes=N-`; a changed object is refused; status errors, HTML pages,
/// refused connections and untrusted certificates fail naming the feed; secrets never show.
@Suite("HTTP(S) feeds, end to end")
struct HTTPFeedRunTests {
    /// The feeds of `CompressedFeedRunTests` in `data/`, served by a new server.
    static func served() throws -> (TemporaryFolder, HTTPFeedServer) {
        let folder = try TemporaryFolder()
        try CompressedFeedRunTests.prepareFeeds(folder)
        return (folder, try HTTPFeedServer(root: folder.path("data")))
    }

    /// A job file importing every format from `base/FORMAT-feed.FORMAT` + `suffix`.
    static func jobFile(base: String, suffix: String, batchSize: Int = 1_000, extra: String = "") -> String {
        CompressedFeedRunTests.jobFile(suffix: suffix, batchSize: batchSize)
            .replacingOccurrences(of: "from: data/", with: "from: \(base)/")
            .replacingOccurrences(of: suffix + " }", with: suffix + extra + " }")
    }

    @Test("every format from HTTP, plain, .gz and .zst, gives the tables the local files give", arguments: ["", ".gz", ".zst"])
    func sameTables(suffix: String) throws {
        let expected = try CompressedFeedRunTests.reference()
        let (folder, server) = try Self.served()
        defer { server.stop() }
        try folder.write("job.yaml", Self.jobFile(base: server.url, suffix: suffix))
        let result = try Batchrun.run(["job.yaml", "--quiet"], in: folder.url)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try CompressedFeedRunTests.tables(folder) == expected)
        #expect(server.requests.contains { $0.uri == "/csv-feed.csv\(suffix)" && $0.method == "GET" }, "\(server.requests)")
    }
}

extension HTTPFeedRunTests {
    /// The N of each `Range: bytes=N-` the server saw for `path`.
    static func rangeStarts(_ server: HTTPFeedServer, _ path: String) -> [Int] {
        server.requests.filter { $0.uri.hasPrefix(path) }.compactMap { request in
            guard let range = request.range, range.hasPrefix("bytes="), range.hasSuffix("-") else { return nil }
            return Int(range.dropFirst(6).dropLast())
        }
    }

    @Test("a connection broken once mid-feed is resumed with a Range request: the run ends ok, each row exactly once",
          arguments: ["", ".gz"])
    func brokenOnce(suffix: String) throws {
        let expected = try CompressedFeedRunTests.reference()["CsvRow"]
        let (folder, server) = try Self.served()
        defer { server.stop() }
        let size = try Data(contentsOf: URL(fileURLWithPath: folder.path("data/csv-feed.csv\(suffix)"))).count
        server.breakOnce(afterBytes: size / 3)
        try folder.write("job.yaml", FeedJobs.singleFeed("\(server.url)/csv-feed.csv\(suffix)", batchSize: 500))
        let result = try Batchrun.run(["job.yaml", "--quiet"], in: folder.url)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try FeedJobs.csvRows(folder) == expected)
        // From the byte the client had when the connection broke (at most what the server sent).
        #expect(Self.rangeStarts(server, "/csv-feed.csv").contains { $0 > 0 && $0 <= size / 3 }, "\(server.requests)")
        #expect(server.requests.contains { $0.header("If-Range") != nil }, "\(server.requests)")
    }

    @Test("kill -9 mid-import, then --resume: the server sees Range: bytes=N- with N > 0; each row exactly once",
          arguments: ["", ".gz"])
    func killedAndResumed(suffix: String) throws {
        let (folder, server) = try Self.served()
        defer { server.stop() }
        try FeedJobs.bigFeed(folder)
        let seen = try FeedJobs.killAndResume("\(server.url)/big.csv\(suffix)", in: folder) { server.requests.count }
        let resumed = Array(server.requests.dropFirst(seen))
        if suffix.isEmpty {
            // Only what is left is downloaded: a Range from the checkpoint's byte, past the first 30,000 rows.
            #expect(resumed.contains { ($0.range.flatMap { Int($0.dropFirst(6).dropLast()) } ?? 0) > 500_000 }, "\(resumed)")
        } else {
            // A compressed feed is read again from its start, decompressed up to the checkpoint.
            #expect(resumed.contains { $0.method == "GET" && $0.range == nil }, "\(resumed)")
        }
    }

    @Test("--resume after the object changed: exit 2 naming the feed, the store untouched")
    func changedObjectRefused() throws {
        let (folder, server) = try Self.served()
        defer { server.stop() }
        try FeedJobs.bigFeed(folder)
        let result = try FeedJobs.changedFeedRefused("\(server.url)/big.csv?sig=querysecret", named: "\(server.url)/big.csv?…", in: folder)
        #expect(!(result.stdout + result.stderr).contains("querysecret"))
    }

    @Test("a 404 fails the job naming the URL (without its query) and the status; batches committed before stay")
    func notFound() throws {
        let (folder, server) = try Self.served()
        defer { server.stop() }
        try folder.write("job.yaml", FeedJobs.csvJob(["insert: { entity: CsvRow, from: \"\(server.url)/csv-feed.csv\" }",
                                                       "insert: { entity: CsvRow, from: \"\(server.url)/missing.csv?token=querysecret\" }"]))
        let result = try Batchrun.run(["job.yaml", "--report", "report.json"], in: folder.url)
        #expect(result.status == 1)
        let output = result.stdout + result.stderr
        #expect(output.contains("\(server.url)/missing.csv?…") && output.contains("404"), "\(output)")
        #expect(!output.contains("querysecret"), "\(output)")
        #expect(try FeedJobs.csvRows(folder).count == CompressedFeedRunTests.rows)
    }

    @Test("an HTML page where a CSV was expected is a clear error naming the feed")
    func htmlPage() throws {
        let (folder, server) = try Self.served()
        defer { server.stop() }
        try folder.write("data/page.csv", "<html><body>Please log in</body></html>\n")
        server.contentType("text/html; charset=utf-8", forSuffix: "page.csv")
        try folder.write("job.yaml", FeedJobs.singleFeed("\(server.url)/page.csv"))
        let result = try Batchrun.run(["job.yaml"], in: folder.url)
        #expect(result.status == 1)
        let output = result.stdout + result.stderr
        #expect(output.contains("\(server.url)/page.csv") && output.contains("HTML page"), "\(output)")
    }

    @Test("a refused connection is an error naming the feed")
    func connectionRefused() throws {
        let (folder, server) = try Self.served()
        let url = "\(server.url)/csv-feed.csv"
        server.stop()
        try folder.write("job.yaml", FeedJobs.singleFeed(url))
        let result = try Batchrun.run(["job.yaml"], in: folder.url)
        #expect(result.status == 1)
        let output = result.stdout + result.stderr
        #expect(output.contains(url) && output.contains("connection refused"), "\(output)")
    }

    @Test("a redirect is followed")
    func redirect() throws {
        let (folder, server) = try Self.served()
        defer { server.stop() }
        server.redirect("/moved.csv", to: "/csv-feed.csv")
        try folder.write("job.yaml", FeedJobs.singleFeed("\(server.url)/moved.csv"))
        let result = try Batchrun.run(["job.yaml", "--quiet"], in: folder.url)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try FeedJobs.csvRows(folder).count == CompressedFeedRunTests.rows)
        #expect(server.requests.map(\.uri).contains("/csv-feed.csv"))
    }

    @Test("a header's ${env.VAR} secret and the URL's query never show: stdout, stderr, JSON and HTML reports, run state")
    func secretsNeverShown() throws {
        let (folder, server) = try Self.served()
        defer { server.stop() }
        server.breakOnce(afterBytes: 50_000)
        try folder.write("job.yaml", FeedJobs.jobFile(jobs: """
              csv:
                batch_size: 500
                steps:
                  - insert:
                      entity: CsvRow
                      from: "\(server.url)/csv-feed.csv?sig=querysecret"
                      headers: { Authorization: "Bearer ${env.FEED_TOKEN}", X-Note: "${env.FEED_TOKEN}" }
              broken:
                needs: csv
                steps:
                  - insert:
                      entity: CsvRow
                      from: "\(server.url)/missing.csv?sig=querysecret"
                      headers: { Authorization: "Bearer ${env.FEED_TOKEN}" }

            """))
        let result = try Batchrun.run(["job.yaml", "--report", "report.json", "--html", "report.html"], in: folder.url,
                                      environment: ["FEED_TOKEN": "headersecret"])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(try FeedJobs.csvRows(folder).count == CompressedFeedRunTests.rows)
        #expect(server.requests.contains { $0.header("Authorization") == "Bearer headersecret" }, "the header was sent")
        let runs = try Batchrun.run(["runs", "job.yaml", "--format", "json"], in: folder.url)
        let texts = [result.stdout, result.stderr, runs.stdout, runs.stderr,
                     try String(contentsOfFile: folder.path("report.json"), encoding: .utf8),
                     try String(contentsOfFile: folder.path("report.html"), encoding: .utf8)]
        for text in texts {
            #expect(!text.contains("headersecret") && !text.contains("querysecret"), "\(text)")
        }
        #expect((texts[0] + texts[1]).contains("/missing.csv?…"), "\(texts[0])\(texts[1])")
        // The store's run state, every table, as bytes (WAL included).
        for file in folder.files() where file.hasPrefix("store.sqlite") {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: folder.path(file)))
            #expect(bytes.range(of: Data("headersecret".utf8)) == nil && bytes.range(of: Data("querysecret".utf8)) == nil, "\(file)")
        }
    }

    @Test("on every run, not only a confined worker's: no redirect from https to http, and headers: stay with their origin")
    func redirectsKeepSecrets() throws {
        let folder = try TemporaryFolder()
        try CompressedFeedRunTests.prepareFeeds(folder)
        let (certificate, key) = try HTTPFeedServer.makeCertificate(in: folder.url.path)
        let secure = try HTTPFeedServer(root: folder.path("data"), certificate: certificate, key: key)
        let plain = try HTTPFeedServer(root: folder.path("data"), host: "127.0.0.2")
        defer { secure.stop(); plain.stop() }
        secure.redirect("/down.csv", to: "\(plain.url)/csv-feed.csv")
        try folder.write("down.yaml", FeedJobs.singleFeed("\(secure.url)/down.csv", extra: ", ca_file: server-cert.pem"))
        let down = try Batchrun.run(["down.yaml"], in: folder.url)
        #expect(down.status == 1)
        #expect((down.stdout + down.stderr).contains("redirects from https to http"), "\(down.stdout)\(down.stderr)")
        #expect(plain.requests.isEmpty)

        let away = try HTTPFeedServer(root: folder.path("data"))
        defer { away.stop() }
        away.redirect("/away.csv", to: "\(plain.url)/csv-feed.csv")
        try folder.write("away.yaml", FeedJobs.singleFeed("\(away.url)/away.csv", extra: ", headers: { X-Api-Key: key-123 }"))
        let moved = try Batchrun.run(["away.yaml", "--quiet"], in: folder.url)
        #expect(moved.status == 0, "\(moved.stderr)")
        #expect(away.requests.allSatisfy { $0.header("X-Api-Key") == "key-123" })
        #expect(!plain.requests.isEmpty && plain.requests.allSatisfy { $0.header("X-Api-Key") == nil }, "\(plain.requests.map(\.headers))")
    }

    @Test("https with ca_file: works; without it the run fails with a message saying certificate")
    func https() throws {
        let folder = try TemporaryFolder()
        try CompressedFeedRunTests.prepareFeeds(folder)
        let (certificate, key) = try HTTPFeedServer.makeCertificate(in: folder.url.path)
        let server = try HTTPFeedServer(root: folder.path("data"), certificate: certificate, key: key)
        defer { server.stop() }
        #expect(server.url.hasPrefix("https://"))
        try folder.write("job.yaml", FeedJobs.singleFeed("\(server.url)/csv-feed.csv.gz", extra: ", ca_file: server-cert.pem"))
        let trusted = try Batchrun.run(["job.yaml", "--quiet"], in: folder.url)
        #expect(trusted.status == 0, "\(trusted.stderr)")
        #expect(try FeedJobs.csvRows(folder).count == CompressedFeedRunTests.rows)
        let other = try TemporaryFolder()
        try other.write("job.yaml", FeedJobs.singleFeed("\(server.url)/csv-feed.csv.gz"))
        let untrusted = try Batchrun.run(["job.yaml"], in: other.url)
        #expect(untrusted.status == 1)
        #expect((untrusted.stdout + untrusted.stderr).contains("certificate"), "\(untrusted.stdout)\(untrusted.stderr)")
    }
}

extension HTTPFeedRunTests {
    /// The columns of the README examples' `Session`.
    static let sessionColumns = ["id", "user", "started_at", "duration", "status"]

    @Test("the README's remote, compressed example runs against a local server and imports what the local file holds")
    func readmeExample() throws {
        let example = try ReadmeExample(after: "**Feeds from a server.**").yaml
        #expect(example.contains("http://127.0.0.1:8000/sessions.csv.gz"))
        let folder = try TemporaryFolder()
        try folder.copyFromPackage("examples")
        let server = try HTTPFeedServer(root: folder.path("examples/data"))
        defer { server.stop() }
        try folder.write("import_remote.yaml", example.replacingOccurrences(of: "http://127.0.0.1:8000", with: server.url))
        let result = try Batchrun.run(["import_remote.yaml"], in: folder.url, environment: ["FEEDS_TOKEN": "demo"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(server.requests.contains { $0.header("Authorization") == "Bearer demo" })
        try folder.write("import_local.yaml", example.replacingOccurrences(of: "http://127.0.0.1:8000/sessions.csv.gz?version=1",
                                                                           with: "examples/data/sessions.csv.gz")
            .replacingOccurrences(of: "var/remote.sqlite", with: "var/local.sqlite")
            .replacingOccurrences(of: "          headers: { Authorization: \"Bearer ${env.FEEDS_TOKEN}\" }\n", with: ""))
        #expect(try Batchrun.run(["import_local.yaml", "--quiet"], in: folder.url).status == 0)
        let remote = try ReadmeExample.rows(of: "Session", columns: Self.sessionColumns, store: folder.path("var/remote.sqlite"))
        let local = try ReadmeExample.rows(of: "Session", columns: Self.sessionColumns, store: folder.path("var/local.sqlite"))
        #expect(remote == local && !remote.isEmpty, "\(remote.count) rows from the server, \(local.count) from the file")
    }
}
