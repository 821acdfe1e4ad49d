import Dispatch
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// A small read-only HTTP/1.1 server on SwiftNIO (already in the build for PostgreSQL): every
/// GET or HEAD goes to `route`, with the request's path (its query cut off); any other method is
/// refused (405). It serves `/metrics` for `worker --metrics` and the live page for `serve`.
///
/// ```swift
/// let server = try ReadOnlyHTTPServer.start(host: "127.0.0.1", port: 9464) { path in
///     path == "/metrics" ? HTTPResponse(contentType: "text/plain", text: "...") : .notFound
/// }
/// print(server.port)
/// ```
package final class ReadOnlyHTTPServer: Sendable {
    private let channel: any Channel
    private let group: MultiThreadedEventLoopGroup

    /// The port it listens on (the one asked for, or the one the system chose for port 0).
    package let port: Int

    private init(channel: any Channel, group: MultiThreadedEventLoopGroup) {
        self.channel = channel
        self.group = group
        self.port = channel.localAddress?.port ?? 0
    }

    /// Listens on `host:port` (one event-loop thread; HTTPS with `tls`) and answers by `route`, called off that
    /// thread (a route may wait: on a PostgreSQL queue's snapshot, which must never block an
    /// event loop).
    package static func start(host: String, port: Int, tls: NIOSSLContext? = nil,
                              route: @escaping @Sendable (String) -> HTTPResponse) throws -> ReadOnlyHTTPServer {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            let channel = try ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 64)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    // With `tls`, HTTPS: the TLS handler first, HTTP over it.
                    let secured: EventLoopFuture<Void> = tls.map { context in
                        channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context)) }
                    } ?? channel.eventLoop.makeSucceededVoidFuture()
                    return secured.flatMap {
                        channel.pipeline.configureHTTPServerPipeline().flatMap {
                            channel.pipeline.addHandler(RouteHandler(route: route))
                        }
                    }
                }
                .bind(host: host, port: port)
                .wait()
            return ReadOnlyHTTPServer(channel: channel, group: group)
        } catch {
            try? group.syncShutdownGracefully()
            throw error
        }
    }

    /// Stops listening and ends its thread.
    package func stop() {
        try? channel.close().wait()
        try? group.syncShutdownGracefully()
    }
}

/// Answers each request by its route once the request has ended.
private final class RouteHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let route: @Sendable (String) -> HTTPResponse
    private var head: HTTPRequestHead?

    init(route: @escaping @Sendable (String) -> HTTPResponse) {
        self.route = route
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): self.head = head
        case .body: break
        case .end:
            guard let head else { return }
            self.head = nil
            guard head.method == .GET || head.method == .HEAD else {
                return respond(HTTPResponse(status: 405, contentType: "text/plain; charset=utf-8", text: "read-only: GET only\n"),
                               to: head, context: context)
            }
            let path = String(head.uri.prefix { $0 != "?" && $0 != "#" })
            let answered = context.eventLoop.makePromise(of: HTTPResponse.self)
            let route = route
            DispatchQueue.global().async { answered.succeed(route(path)) }
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            answered.futureResult.whenSuccess { response in
                let (handler, context) = bound.value
                handler.respond(response, to: head, context: context)
            }
        }
    }

    /// Writes `response` (on the event loop).
    private func respond(_ response: HTTPResponse, to head: HTTPRequestHead, context: ChannelHandlerContext) {
        if let events = response.events, head.method == .GET { return stream(events, context: context, version: head.version) }
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: response.contentType)
        headers.add(name: "Content-Length", value: String(response.body.count))
        headers.add(name: "Cache-Control", value: "no-store")
        headers.add(name: "X-Content-Type-Options", value: "nosniff")
        let keepAlive = head.isKeepAlive
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        let responseHead = HTTPResponseHead(version: head.version, status: HTTPResponseStatus(statusCode: response.status), headers: headers)
        context.write(wrapOutboundOut(.head(responseHead)), promise: nil)
        if head.method != .HEAD {
            var buffer = context.channel.allocator.buffer(capacity: response.body.count)
            buffer.writeBytes(response.body)
            context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        }
        let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        let channel = context.channel
        if !keepAlive { done.whenComplete { _ in channel.close(promise: nil) } }
    }

    /// Server-sent events: an event now and every second after, until the client goes; each
    /// made off the event loop.
    private func stream(_ events: @escaping @Sendable () -> String, context: ChannelHandlerContext, version: HTTPVersion) {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/event-stream; charset=utf-8")
        headers.add(name: "Cache-Control", value: "no-store")
        context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: version, status: .ok, headers: headers))), promise: nil)
        let channel = context.channel
        let send: @Sendable () -> Void = {
            DispatchQueue.global().async {
                let data = events().split(separator: "\n", omittingEmptySubsequences: false).map { "data: \($0)\n" }.joined() + "\n"
                var buffer = channel.allocator.buffer(capacity: data.utf8.count)
                buffer.writeString(data)
                channel.writeAndFlush(HTTPServerResponsePart.body(.byteBuffer(buffer)), promise: nil)
            }
        }
        send()
        let task = channel.eventLoop.scheduleRepeatedTask(initialDelay: .seconds(1), delay: .seconds(1)) { _ in send() }
        channel.closeFuture.whenComplete { _ in task.cancel() }
    }
}
