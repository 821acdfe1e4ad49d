import Foundation
import Hummingbird

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
    package let server: HTTPServer
    let listen: ListenAddress

    private init(inbox: ItemMetricsInbox, server: HTTPServer, listen: ListenAddress) {
        self.inbox = inbox
        self.server = server
        self.listen = listen
    }

    package static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    package static func start(listen: ListenAddress) throws -> WorkerMetricsServer {
        MetricsExport.start()
        let inbox = try ItemMetricsInbox()
        do {
            let router = Router(options: .autoGenerateHeadEndpoints)
            router.add(middleware: PageHeadersMiddleware(actions: false))
            router.get("/metrics") { _, _ in Response.text(await offTheLoop { inbox.text() }, contentType: contentType) }  // reads the items' files
            router.get("/") { _, _ in Response.text("batchrun worker: metrics at /metrics\n") }
            let server = try HTTPServer.start(host: listen.host, port: listen.port, router: router)
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
