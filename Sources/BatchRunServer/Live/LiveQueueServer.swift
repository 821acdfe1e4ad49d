import BatchRunKit
import BatchRunRender
import Foundation
import Synchronization

/// `batchrun serve QUEUE`: the live page at `/`, its server-sent events at `/events`, and each
/// finished item's HTML report and log at `/items/KEY/report.html` and `/items/KEY/log`, where
/// KEY must name a finished item of the queue (nothing else is read: no path escapes). A live
/// snapshot of the queue (`Queue.snapshot(.live(...))`, the same for a folder and PostgreSQL)
/// is taken at most once a second, whoever asks.
///
/// ```swift
/// let server = try LiveQueueServer.start(queue: "var/queue", listen: ListenAddress("127.0.0.1:8080")!)
/// print(server.url)
/// ```
package final class LiveQueueServer: Sendable {
    /// How many finished (and failed) items the page lists, newest first.
    package static let finishedShown = 50

    private struct Cache {
        var snapshot: QueueSnapshot?
        var rates: [String: Double] = [:]
        /// Each running item's rows when they last changed, and when.
        var seen: [String: (rows: Int, at: Date)] = [:]
    }

    private let queue: any Queue
    private let cache = Mutex(Cache())
    private let listen: ListenAddress
    /// Served over HTTPS (`--tls-cert`).
    private let secure: Bool
    private let server: Mutex<ReadOnlyHTTPServer?> = Mutex(nil)

    private init(queue: any Queue, listen: ListenAddress, secure: Bool) {
        self.secure = secure
        self.queue = queue
        self.listen = listen
    }

    /// Opens the queue (a folder must exist) and listens.
    package static func start(queue location: String, listen: ListenAddress, tls: ServerTLS? = nil) throws -> LiveQueueServer {
        if case .folder = QueueLocation(location), !FileManager.default.fileExists(atPath: location + "/pending") {
            throw NotAQueueFolder(path: location)
        }
        let context = try tls?.context()
        let live = LiveQueueServer(queue: try openQueue(at: location), listen: listen, secure: context != nil)
        let server = try ReadOnlyHTTPServer.start(host: listen.host, port: listen.port, tls: context) { [live] path in live.respond(to: path) }
        live.server.withLock { $0 = server }
        return live
    }

    package var port: Int { server.withLock { $0?.port ?? 0 } }
    package var url: String { "\(secure ? "https" : "http")://\(ListenAddress.host(listen.host)):\(port)/" }

    package func stop() {
        server.withLock { $0?.stop() }
    }

    func respond(to path: String) -> HTTPResponse {
        switch path {
        case "/", "/index.html":
            let (snapshot, rates) = current()
            let nonce = (0..<16).map { _ in String("abcdefghijklmnopqrstuvwxyz0123456789".randomElement()!) }.joined()
            return HTTPResponse(contentType: "text/html; charset=utf-8", text: LiveQueuePage.page(snapshot, rates: rates, nonce: nonce))
        case "/events":
            var response = HTTPResponse(contentType: "text/event-stream", body: [])
            response.events = { [self] in
                let (snapshot, rates) = current()
                return "{\"html\":\(LogFormat.quote(LiveQueuePage.fragment(snapshot, rates: rates)))}"
            }
            return response
        default:
            return item(path) ?? .notFound
        }
    }

    /// The snapshot of the last second (taken now when older), with each running item's rows per second.
    func current() -> (QueueSnapshot, [String: Double]) {
        cache.withLock { cache in
            if let snapshot = cache.snapshot, Date().timeIntervalSince(snapshot.takenAt) < 1 { return (snapshot, cache.rates) }
            var snapshot = (try? queue.snapshot(.live(finishedShown: Self.finishedShown))) ?? QueueSnapshot(unreadable: queue.location)
            // The batches still going, and the newest finished ones.
            snapshot.pause = (try? queue.pause()) ?? QueuePause()
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

    /// `/items/KEY/report.html` or `/items/KEY/log` of a finished item; nil for anything else.
    private func item(_ path: String) -> HTTPResponse? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0].isEmpty, parts[1] == "items", parts[3] == "report.html" || parts[3] == "log",
              let key = String(parts[2]).removingPercentEncoding, !key.contains("/"), key != ".", key != ".." else { return nil }
        let wantsLog = parts[3] == "log"
        guard let output = try? queue.output(of: key), [.done, .failed, .cancelled].contains(output.state) else { return nil }
        if wantsLog { return HTTPResponse(contentType: "text/plain; charset=utf-8", text: output.log) }
        guard let json = output.report, let report = try? RunReport(jsonData: Data(json.utf8)) else {
            return HTTPResponse(status: 404, contentType: "text/plain; charset=utf-8", text: "no report for this item (its log may say why)\n")
        }
        return HTTPResponse(contentType: "text/html; charset=utf-8", text: HTMLReport(sections: [.init(report: report)]).render())
    }
}

/// `serve` was given a folder that is not a queue folder.
package struct NotAQueueFolder: Error, CustomStringConvertible {
    let path: String
    package var description: String { "\(path) is not a queue folder (no pending/); give the folder `batchrun submit` made" }
}
