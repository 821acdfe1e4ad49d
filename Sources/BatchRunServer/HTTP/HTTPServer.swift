import Dispatch
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOCore
import NIOSSL
import Synchronization

/// An HTTP/1.1 server on Hummingbird (over SwiftNIO, already in the build for PostgreSQL) that
/// answers with `router`: `/metrics` for `worker --metrics`, the live page and its actions for
/// `serve`. It starts before `start` returns (or throws why it could not listen) and runs on
/// its own until `stop()`.
///
/// ```swift
/// let router = Router()
/// router.get("/metrics") { _, _ in "..." }
/// let server = try HTTPServer.start(host: "127.0.0.1", port: 9464, router: router)
/// print(server.port)
/// server.stop()
/// ```
package final class HTTPServer: Sendable {
    /// The port it listens on (the one asked for, or the one the system chose for port 0).
    package let port: Int
    private let running: Task<Void, any Error>

    private init(port: Int, running: Task<Void, any Error>) {
        self.port = port
        self.running = running
    }

    /// Listens on `host:port` (HTTPS with `tls`) and answers by `router`; `sessions` (the page's
    /// session store, which forgets expired sessions as it runs) runs beside it and stops with it.
    package static func start<Router: HTTPResponderBuilder>(
        host: String, port: Int, tls: TLSConfiguration? = nil, router: Router, sessions: MemoryPersistDriver<ContinuousClock>? = nil
    ) throws -> HTTPServer where Router.Responder.Context: RequestContext, Router.Responder.Context.Source == ApplicationRequestContextSource {
        let started = StartSignal()
        let server: HTTPServerBuilder = try tls.map { try .tls(.http1(), tlsConfiguration: $0) } ?? .http1()
        let application = Application(
            router: router, server: server,
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: nil, backlog: 64),
            services: sessions.map { [$0] } ?? [],
            onServerRunning: { channel in started.succeed(port: channel.localAddress?.port ?? 0) },
            // Quiet: what `serve` and `worker` say of the server, they print themselves.
            logger: Logger(label: "batchrun.http", factory: { _ in SwiftLogNoOpLogHandler() }))
        let running = Task {
            do { try await application.runService(gracefulShutdownSignals: []) } catch {
                started.fail(error)
                throw error
            }
            started.fail(CancellationError())
        }
        do {
            return HTTPServer(port: try started.wait(), running: running)
        } catch {
            running.cancel()
            throw error
        }
    }

    /// Stops listening, ends every connection (a live page's events too) and waits until it has.
    package func stop() {
        running.cancel()
        let ended = DispatchSemaphore(value: 0)
        Task { [running] in
            _ = await running.result
            ended.signal()
        }
        _ = ended.wait(timeout: .now() + 10)
    }
}

/// The port the server listens on once it does, or why it could not listen.
private final class StartSignal: Sendable {
    private let outcome = Mutex<Result<Int, any Error>?>(nil)
    private let ready = DispatchSemaphore(value: 0)

    func succeed(port: Int) { settle(.success(port)) }
    func fail(_ error: any Error) { settle(.failure(error)) }

    private func settle(_ result: Result<Int, any Error>) {
        let first = outcome.withLock { outcome in
            guard outcome == nil else { return false }
            outcome = result
            return true
        }
        if first { ready.signal() }
    }

    func wait() throws -> Int {
        ready.wait()
        return try outcome.withLock { $0! }.get()
    }
}
