import Foundation

/// `worker --metrics HOST:PORT`: `/metrics` in Prometheus' text format, the worker's own
/// metrics plus those its items' processes wrote (`ItemMetricsInbox`).
///
/// ```swift
/// let metrics = try WorkerMetricsServer.start(listen: ListenAddress("127.0.0.1:9464")!)
/// ... worker.run() ...
/// metrics.stop()
/// ```
package final class WorkerMetricsServer: Sendable {
    package let inbox: ItemMetricsInbox
    package let server: ReadOnlyHTTPServer
    let listen: ListenAddress

    private init(inbox: ItemMetricsInbox, server: ReadOnlyHTTPServer, listen: ListenAddress) {
        self.inbox = inbox
        self.server = server
        self.listen = listen
    }

    package static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    package static func start(listen: ListenAddress) throws -> WorkerMetricsServer {
        MetricsExport.start()
        let inbox = try ItemMetricsInbox()
        do {
            let server = try ReadOnlyHTTPServer.start(host: listen.host, port: listen.port) { path in
                switch path {
                case "/metrics": HTTPResponse(contentType: contentType, text: inbox.text())
                case "/": HTTPResponse(contentType: "text/plain; charset=utf-8", text: "batchrun worker: metrics at /metrics\n")
                default: .notFound
                }
            }
            return WorkerMetricsServer(inbox: inbox, server: server, listen: listen)
        } catch {
            inbox.close()
            throw error
        }
    }

    /// Where `/metrics` is: `http://127.0.0.1:9464/metrics`.
    package var url: String { "http://\(ListenAddress.host(listen.host)):\(server.port)/metrics" }

    package func stop() {
        server.stop()
        inbox.close()
    }
}
