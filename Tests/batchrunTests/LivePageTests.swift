import Foundation
import Testing
import TestSupport

/// `batchrun serve`: the live page of a queue folder, loaded in headless Chromium (Debian's
/// `chromium`, which `make test-deps` installs) while an item runs.
@Suite("Live page")
struct LivePageTests {
    /// A long feed inserted 100 rows a batch: it runs long enough to be watched.
    /// 40,000 batches: tens of seconds, so it still runs while the page is loaded twice (the worker is stopped after).
    static let slowItem = """
        version: 1
        store: slow.sqlite
        entities:
          Row:
            columns: { id: integer primary key, minutes: integer not null }
        jobs:
          load:
            batch_size: 10
            steps:
              - insert: { entity: Row, from: feed.csv }
        """

    static let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// The page as Chromium has it once loaded and its script ran (`--dump-dom`).
    static func dom(_ url: String) throws -> String {
        let browser = try #require(chromium, "headless Chromium is needed: `make test-deps` installs Debian's chromium")
        let profile = NSTemporaryDirectory() + "/batchrun-chromium-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: profile) }
        let process = Process()
        // Bounded: a browser that hangs fails the test instead of holding it. A profile of its own:
        // a second Chromium on the same profile hands its URL to the first and prints nothing.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
        process.arguments = ["120", browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                             "--user-data-dir=\(profile)", "--dump-dom", url]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    /// The rows so far of the running item, as a page shows them.
    static func rowsSoFar(_ page: String) -> Int? {
        guard let range = page.range(of: "class=\"n rows\">") else { return nil }
        return Int(page[range.upperBound...].prefix { $0 != "<" }.filter(\.isNumber))
    }

    @Test("the page in headless Chromium while an item runs: the running item with a progress bar, numbers that move, reports and logs one click away, loopback only")
    func livePage() throws {
        let folder = try TemporaryFolder()
        try Batchrun.writeLongFeed(in: folder)
        try folder.write("ok.yaml", MetricsTests.jobFile(store: "ok.sqlite"))
        #expect(try Batchrun.run(["submit", "q", "ok.yaml"], in: folder.url).status == 0)
        #expect(try Batchrun.run(["worker", "q", "--once", "-q"], in: folder.url).status == 0)
        let done = try #require(try FileManager.default.contentsOfDirectory(atPath: folder.path("q/done")).first { $0.hasSuffix("ok.yaml") })
        try folder.write("slow.yaml", Self.slowItem.replacingOccurrences(of: "from: feed.csv", with: "from: \(folder.path("feed.csv"))")
            .replacingOccurrences(of: "store: slow.sqlite", with: "store: \(folder.path("slow.sqlite"))"))
        #expect(try Batchrun.run(["submit", "q", "slow.yaml"], in: folder.url).status == 0)
        let worker = try Batchrun.start(["worker", "q", "-q"], in: folder)
        defer { worker.terminate(); worker.waitUntilExit() }
        let output = folder.url.appendingPathComponent("serve.out")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let serve = try Batchrun.start(["serve", "q", "--listen", "127.0.0.1:0"], in: folder, output: try FileHandle(forWritingTo: output))
        defer { serve.terminate(); serve.waitUntilExit() }
        var port: Int?
        let deadline = Date().addingTimeInterval(120)
        while port == nil, Date() < deadline {
            let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            if let range = text.range(of: "at http://127.0.0.1:") { port = Int(text[range.upperBound...].prefix { $0.isNumber }) }
            Thread.sleep(forTimeInterval: 0.05)
        }
        let listening = try #require(port, "serve said where it listens")
        #expect(listeningAddresses(port: listening) == ["0100007F"], "bound to 127.0.0.1 only")
        // Wait until the item has committed rows.
        while Date() < deadline, (httpGet(port: listening, path: "/").map { Self.rowsSoFar($0.body) ?? 0 } ?? 0) == 0 {
            Thread.sleep(forTimeInterval: 0.1)
        }
        let url = "http://127.0.0.1:\(listening)/"
        let first = try Self.dom(url)
        #expect(first.contains("<h2>running (1)</h2>"), "\(first.prefix(2000))")
        #expect(first.contains("slow.yaml</td>"))
        #expect(first.contains("<progress class=\"item-progress\""))
        #expect(first.contains("max=\"1\""), "the feed's size is known: a determinate bar")
        Thread.sleep(forTimeInterval: 1.5)
        let second = try Self.dom(url)
        let (before, after) = (Self.rowsSoFar(first), Self.rowsSoFar(second))
        #expect(before != nil && after != nil)
        #expect((after ?? 0) > (before ?? 0), "rows so far moved between two loads")
        #expect(second.contains("\(done)</td>") && second.contains("items/\(done)/report.html"))
        // Reports and logs of finished items, and nothing else.
        let report = try #require(httpGet(port: listening, path: "/items/\(done)/report.html"))
        #expect(report.status == 200 && report.body.contains("<html"))
        #expect(httpGet(port: listening, path: "/items/\(done)/log")?.status == 200)
        for escape in ["/items/..%2Fok.yaml/log", "/items/%2e%2e/log", "/items/../q/done/\(done)/log", "/items/slow.yaml/log", "/events/../../etc/passwd"] {
            #expect(httpGet(port: listening, path: escape)?.status == 404, "\(escape)")
        }
        // Server-sent events carry the live part.
        let events = try #require(Self.firstEvent(port: listening))
        #expect(events.hasPrefix("data: {\"html\":"))
    }

    /// `batchrun serve QUEUE` on a free loopback port, started in `folder`; the process and its port.
    /// `options` go after the queue (`--listen 0.0.0.0:0 --tls-cert ...`): then the port is the one it says after `HOST:`.
    static func serve(_ queue: String, in folder: TemporaryFolder, options: [String] = ["--listen", "127.0.0.1:0"],
                      host: String = "127.0.0.1") throws -> (Process, Int) {
        let output = folder.url.appendingPathComponent("serve-\(UUID().uuidString).out")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let serve = try Batchrun.start(["serve", queue] + options, in: folder, output: try FileHandle(forWritingTo: output))
        let deadline = Date().addingTimeInterval(120)
        while Date() < deadline {
            let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            if let range = text.range(of: "://\(host):"), let port = Int(text[range.upperBound...].prefix { $0.isNumber }) {
                return (serve, port)
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        serve.terminate()
        serve.waitUntilExit()
        throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "serve never said where it listens"])
    }

    /// The long item on the SQLite store beside it (absolute paths: a PostgreSQL queue's item runs elsewhere).
    static func slowItem(in folder: TemporaryFolder) -> String {
        slowItem.replacingOccurrences(of: "from: feed.csv", with: "from: \(folder.path("feed.csv"))")
            .replacingOccurrences(of: "store: slow.sqlite", with: "store: \(folder.path("slow.sqlite"))")
    }

    /// Waits (up to 120 s) until the page shows the running item's rows.
    static func waitForRows(port: Int) {
        let deadline = Date().addingTimeInterval(120)
        while Date() < deadline, (httpGet(port: port, path: "/").map { rowsSoFar($0.body) ?? 0 } ?? 0) == 0 {
            Thread.sleep(forTimeInterval: 0.1)
        }
    }

    @Test("a PostgreSQL queue's page in headless Chromium while an item runs: the progress its run writes into the item's row, numbers that move")
    func livePagePostgres() throws {
        let url = try PostgresServer.database("live")
        let folder = try TemporaryFolder()
        try Batchrun.writeLongFeed(in: folder)
        try folder.write("slow.yaml", Self.slowItem(in: folder))
        let submitted = try Batchrun.run(["submit", url, "slow.yaml"], in: folder.url)
        #expect(submitted.status == 0, "\(submitted.stderr)")
        let worker = try Batchrun.start(["worker", url, "--trust-submitters", "-q"], in: folder)
        defer { worker.terminate(); worker.waitUntilExit() }
        let (serve, port) = try Self.serve(url, in: folder)
        defer { serve.terminate(); serve.waitUntilExit() }
        Self.waitForRows(port: port)
        let page = "http://127.0.0.1:\(port)/"
        let first = try Self.dom(page)
        #expect(first.contains("<h2>running (1)</h2>"), "\(first.prefix(2000))")
        #expect(first.contains("slow.yaml</td>"))
        #expect(first.contains("<progress class=\"item-progress\""))
        #expect(first.contains("max=\"1\""), "the feed's size is known: a determinate bar")
        Thread.sleep(forTimeInterval: 2.5)   // the run publishes once a second
        let second = try Self.dom(page)
        let (before, after) = (Self.rowsSoFar(first), Self.rowsSoFar(second))
        #expect(before != nil && after != nil)
        #expect((after ?? 0) > (before ?? 0), "rows so far moved between two loads")
        // The run's process, from the progress in the row (the worker names itself PID@HOST too, but never its child).
        let published = try PostgresServer.psql(url, "SELECT progress::json->>'pid' FROM _batchrun_queue WHERE state = 'running'")
        #expect(!published.isEmpty && published != String(worker.processIdentifier))
        #expect(second.contains(">\(published)@"), "the running item's process is its run's")
        // Through the same path as a folder's: only a finished item's output is served.
        let running = try PostgresServer.psql(url, "SELECT id FROM _batchrun_queue WHERE state = 'running'")
        #expect(httpGet(port: port, path: "/items/\(running)/log")?.status == 404, "a running item's log is not served")
    }

    /// The first server-sent event of `/events`.
    static func firstEvent(port: Int) -> String? {
        func firstEvent(_ text: String) -> String? {
            // Chunked: the first chunk's size line comes before the event.
            guard let head = text.range(of: "\r\n\r\n"), text[head.upperBound...].contains("\n\n") else { return nil }
            let body = text[head.upperBound...]
            return body.range(of: "data: ").map { String(body[$0.lowerBound...]) }
        }
        return loopbackGet(port: port, path: "/events", close: false, until: { firstEvent($0) != nil }).flatMap(firstEvent)
    }
}

extension LivePageTests {
    /// `curl` of `url` (`--cacert` when given); its output, and whether it succeeded.
    static func curl(_ url: String, caFile: String? = nil) throws -> (ok: Bool, body: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = ["-s", "--max-time", "20"] + (caFile.map { ["--cacert", $0] } ?? []) + [url]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let body = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus == 0, body)
    }

    @Test("serve on an address other than loopback: refused without TLS (exit 2, saying what to give); HTTPS with --tls-cert/--tls-key (a client that trusts the certificate reads the page, plain HTTP gets nothing); a bad certificate is exit 2 naming it; --insecure-http serves plain HTTP on purpose")
    func tls() throws {
        let folder = try TemporaryFolder()
        try FileManager.default.createDirectory(atPath: folder.path("q/pending"), withIntermediateDirectories: true)
        let refused = try Batchrun.run(["serve", "q", "--listen", "0.0.0.0:0"], in: folder.url)
        #expect(refused.status == 2 && refused.stderr.contains("is not loopback: give --tls-cert FILE and --tls-key FILE"), "\(refused.stderr)")
        try CompressedFeedRunTests.program("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", folder.path("page.key"),
                                                       "-out", folder.path("page.crt"), "-days", "2", "-subj", "/CN=localhost",
                                                       "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"])
        let (secure, port) = try Self.serve("q", in: folder, options: ["--listen", "0.0.0.0:0", "--tls-cert", "page.crt", "--tls-key", "page.key"],
                                            host: "0.0.0.0")
        defer { secure.terminate(); secure.waitUntilExit() }
        let page = try Self.curl("https://127.0.0.1:\(port)/", caFile: folder.path("page.crt"))
        #expect(page.ok && page.body.contains("<!DOCTYPE html>"), "\(page.body.prefix(300))")
        #expect(try !Self.curl("https://127.0.0.1:\(port)/").ok, "a client that does not trust the certificate refuses it")
        #expect(try !Self.curl("http://127.0.0.1:\(port)/").body.contains("<!DOCTYPE html>"), "no page over plain HTTP")

        let bad = try Batchrun.run(["serve", "q", "--listen", "127.0.0.1:0", "--tls-cert", "page.key", "--tls-key", "page.key"], in: folder.url)
        #expect(bad.status == 2 && bad.stderr.contains("page.key: not a readable PEM certificate"), "\(bad.stderr)")
        let (plain, plainPort) = try Self.serve("q", in: folder, options: ["--listen", "0.0.0.0:0", "--insecure-http"], host: "0.0.0.0")
        defer { plain.terminate(); plain.waitUntilExit() }
        #expect(try Self.curl("http://127.0.0.1:\(plainPort)/").body.contains("<!DOCTYPE html>"))
    }
}
