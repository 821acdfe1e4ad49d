import BatchRunKit
import BatchRunRender
import Foundation
import Hummingbird
import HummingbirdAuth
import Synchronization

/// `batchrun serve QUEUE`: the live page at `/`, its server-sent events at `/events`, and each
/// finished item's HTML report and log at `/items/KEY/report.html` and `/items/KEY/log`, where
/// KEY must name a finished item of the queue (nothing else is read: no path escapes). A live
/// snapshot of the queue (`Queue.snapshot(.live(...))`, the same for a folder and PostgreSQL)
/// is taken at most once a second, whoever asks. With `tokens` (`serve --actions`), a reader
/// signs in and acts on the queue (`LiveQueueServer+Actions.swift`).
///
/// ```swift
/// let server = try LiveQueueServer.start(queue: "var/queue", listen: ListenAddress("127.0.0.1:8080")!)
/// print(server.url)
/// ```
package final class LiveQueueServer: Sendable {
    /// How many finished (and failed) items the page lists, newest first; and how many pending.
    package static let finishedShown = 50

    /// A request's context: its session, and who signed in (nil when no one did).
    typealias Context = BasicSessionRequestContext<PageSession, PageSession>

    private struct Cache {
        var snapshot: QueueSnapshot?
        var rates: [String: Double] = [:]
        /// Each running item's rows when they last changed, and when.
        var seen: [String: (rows: Int, at: Date)] = [:]
    }

    let queue: any Queue
    private let cache = Mutex(Cache())
    private let listen: ListenAddress
    /// Served over HTTPS (`--tls-cert`).
    let secure: Bool
    /// Who may act (`--actions --token-file`); nil: the page is read-only.
    let tokens: ServeTokens?
    /// Where the page's readers reach it besides the listen address (`--origin`): a proxy's.
    private let origins: [String]
    /// The signed-in readers' sessions, in memory.
    private let sessions = MemoryPersistDriver()
    let sessionStorage: SessionStorage<PageSession>
    private let server: Mutex<HTTPServer?> = Mutex(nil)

    private init(queue: any Queue, listen: ListenAddress, secure: Bool, tokens: ServeTokens?, origins: [String]) {
        self.secure = secure
        self.queue = queue
        self.listen = listen
        self.tokens = tokens
        self.origins = origins.map { $0.lowercased().hasSuffix("/") ? String($0.lowercased().dropLast()) : $0.lowercased() }
        // `__Host-`: under TLS, a cookie no other host nor path can set or shadow.
        let cookie = SessionCookieParameters(name: secure ? "__Host-batchrun_session" : "batchrun_session", path: "/", secure: secure, sameSite: .strict)
        sessionStorage = SessionStorage(sessions, configuration: SessionStorageConfiguration(sessionCookieParameters: cookie, keyPrefix: "session."))
    }

    /// Opens the queue (a folder must exist) and listens; with `tokens`, the page's actions are
    /// on, taken from pages at the listen address or one of `origins`.
    package static func start(queue location: String, listen: ListenAddress, tls: ServerTLS? = nil,
                              actions tokens: ServeTokens? = nil, origins: [String] = []) throws -> LiveQueueServer {
        if case .folder = QueueLocation(location), !FileManager.default.fileExists(atPath: location + "/pending") {
            throw NotAQueueFolder(path: location)
        }
        let configuration = try tls?.configuration()
        let live = LiveQueueServer(queue: try openQueue(at: location), listen: listen, secure: configuration != nil, tokens: tokens, origins: origins)
        let server = try HTTPServer.start(host: listen.host, port: listen.port, tls: configuration,
                                          router: live.router(), sessions: tokens == nil ? nil : live.sessions)
        live.server.withLock { $0 = server }
        return live
    }

    /// The origins (`scheme://host:port`) whose pages may post actions: the listen address as a
    /// browser on this machine names it (loopback: `127.0.0.1`, `localhost`, `[::1]`; none for
    /// every address), and `--origin`'s.
    var allowedOrigins: [String] {
        let scheme = secure ? "https" : "http"
        let hosts = listen.isLoopback ? ["127.0.0.1", "localhost", "[::1]"] : listen.isWildcard ? [] : [ListenAddress.host(listen.host)]
        return hosts.map { "\(scheme)://\($0):\(port)" } + origins
    }

    package var port: Int { server.withLock { $0?.port ?? 0 } }
    package var url: String { "\(secure ? "https" : "http")://\(ListenAddress.host(listen.host)):\(port)/" }

    package func stop() {
        let running = server.withLock { server in
            defer { server = nil }
            return server
        }
        running?.stop()
    }

    /// The page's routes: GET only unless actions are on.
    private func router() -> Router<Context> {
        let router = Router(context: Context.self, options: .autoGenerateHeadEndpoints)
        router.add(middleware: PageHeadersMiddleware(actions: tokens != nil))
        if tokens != nil {
            // A request naming another host (a name rebound to this address) is refused.
            router.add(middleware: KnownHostMiddleware { [self] in allowedOrigins })
            router.add(middleware: SessionMiddleware(sessionStorage: sessionStorage, defaultSessionExpiration: .seconds(12 * 60 * 60)))
            router.add(middleware: SessionAuthenticator(context: Context.self) { session, _ in session })
            addActions(to: router)
        }
        for path in ["/", "/index.html"] {
            router.get(RouterPath(path)) { [self] _, context in
                let (snapshot, rates) = await offTheLoop { self.current() }
                let nonce = (0..<16).map { _ in String("abcdefghijklmnopqrstuvwxyz0123456789".randomElement()!) }.joined()
                return Response.text(LiveQueuePage.page(snapshot, rates: rates, nonce: nonce, actions: self.actions(for: context)), contentType: "text/html; charset=utf-8")
            }
        }
        router.get("/events") { [self] _, context in
            let actions = self.actions(for: context)
            return Response(status: .ok, headers: [.contentType: "text/event-stream; charset=utf-8"], body: ResponseBody { writer in
                // An event now and every second after, until the reader goes (its write fails) or the server stops.
                while !Task.isCancelled {
                    let (snapshot, rates) = await offTheLoop { self.current() }
                    let json = "{\"html\":\(LogFormat.quote(LiveQueuePage.fragment(snapshot, rates: rates, actions: actions)))}"
                    let event = json.split(separator: "\n", omittingEmptySubsequences: false).map { "data: \($0)\n" }.joined() + "\n"
                    try await writer.write(ByteBuffer(string: event))
                    try await Task.sleep(for: .seconds(1))
                }
                try await writer.finish(nil)
            })
        }
        router.get("/items/:key/:file") { [self] request, _ in
            let path = request.uri.path
            return await offTheLoop { self.item(path) } ?? .text("not found\n", status: .notFound)
        }
        return router
    }

    /// What the page offers the reader of `context`.
    func actions(for context: Context) -> PageActions {
        guard tokens != nil else { return .none }
        guard let session = context.identity else { return .signIn }
        return .signedIn(who: session.who, formToken: session.formToken)
    }

    /// The snapshot of the last second (taken now when older), with each running item's rows per second.
    func current() -> (QueueSnapshot, [String: Double]) {
        cache.withLock { cache in
            if let snapshot = cache.snapshot, Date().timeIntervalSince(snapshot.takenAt) < 1 { return (snapshot, cache.rates) }
            var snapshot = (try? queue.snapshot(.live(finishedShown: Self.finishedShown))) ?? QueueSnapshot(unreadable: queue.location)
            // The batches still going, and the newest finished ones.
            snapshot.pause = (try? queue.pause()) ?? QueuePause()
            snapshot.audit = (try? queue.audit()) ?? []
            let batches = (try? queue.batches()) ?? []
            snapshot.batches = batches.filter { !$0.isFinished } + batches.filter(\.isFinished).suffix(Self.finishedShown).reversed()
            var seen: [String: (rows: Int, at: Date)] = [:]
            for item in snapshot.items(in: [.running]) {
                guard let rows = item.rows else { continue }
                if let last = cache.seen[item.key], last.rows != rows {
                    let seconds = snapshot.takenAt.timeIntervalSince(last.at)
                    if seconds > 0 { cache.rates[item.key] = Double(rows - last.rows) / seconds }
                    seen[item.key] = (rows, snapshot.takenAt)
                } else {
                    seen[item.key] = cache.seen[item.key] ?? (rows, item.startedAt ?? snapshot.takenAt)
                    if cache.rates[item.key] == nil, let started = item.startedAt, snapshot.takenAt > started {
                        cache.rates[item.key] = Double(rows) / snapshot.takenAt.timeIntervalSince(started)
                    }
                }
            }
            cache.rates = cache.rates.filter { seen[$0.key] != nil }
            cache.seen = seen
            cache.snapshot = snapshot
            return (snapshot, cache.rates)
        }
    }

    /// Forgets the last snapshot: the next page shows what an action changed.
    func refresh() {
        cache.withLock { $0.snapshot = nil }
    }

    /// `/items/KEY/report.html` or `/items/KEY/log` of a finished item; nil for anything else.
    private func item(_ path: String) -> Response? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0].isEmpty, parts[1] == "items", parts[3] == "report.html" || parts[3] == "log",
              let key = String(parts[2]).removingPercentEncoding, !key.contains("/"), key != ".", key != ".." else { return nil }
        let wantsLog = parts[3] == "log"
        guard let output = try? queue.output(of: key), [.done, .failed, .cancelled].contains(output.state) else { return nil }
        if wantsLog { return .text(output.log, contentType: "text/plain; charset=utf-8") }
        guard let json = output.report, let report = try? RunReport(jsonData: Data(json.utf8)) else {
            return .text("no report for this item (its log may say why)\n", status: .notFound)
        }
        return .text(HTMLReport(sections: [.init(report: report)]).render(), contentType: "text/html; charset=utf-8")
    }
}

/// `serve` was given a folder that is not a queue folder.
package struct NotAQueueFolder: Error, CustomStringConvertible {
    let path: String
    package var description: String { "\(path) is not a queue folder (no pending/); give the folder `batchrun submit` made" }
}
