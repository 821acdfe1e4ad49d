import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Synchronization

/// A small HTTP/1.1 file server on 127.0.0.1 for the remote-feed tests: it serves the files
/// of `root` with `ETag` (a hash of the content), `Last-Modified` and `Content-Length`, answers
/// `Range: bytes=N-` and `bytes=N-M` with 206 (honouring `If-Range`), and can, on request,
/// redirect a path, break a connection once after some bytes of a body, or serve over TLS.
/// It logs every request (method, path with query, `Range`, all headers) for the test to read.
///
/// ```swift
/// let server = try HTTPFeedServer(root: folder.path("served"))
/// defer { server.stop() }
/// server.breakOnce(afterBytes: 100_000)
/// ... run batchrun with from: \(server.url)/feed.csv ...
/// #expect(server.requests.contains { $0.range == "bytes=100000-" })
/// ```
public final class HTTPFeedServer: Sendable {
    /// One request as the server saw it.
    public struct Request: Sendable, CustomStringConvertible {
        public var method: String
        /// The request target, query string included.
        public var uri: String
        public var range: String?
        public var headers: [(name: String, value: String)]

        public func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }

        public var description: String { "\(method) \(uri) Range: \(range ?? "-")" }
    }

    struct Settings {
        var requests: [Request] = []
        var redirects: [String: String] = [:]
        var breakAfter: Int?
        var sendETag = true
        var contentTypes: [String: String] = [:]
        var stopped = false
    }

    private let channel: any Channel
    private let group: MultiThreadedEventLoopGroup
    private let box = Box()
    /// `http://HOST:PORT` or `https://HOST:PORT` (`[::1]` for IPv6).
    public let url: String
    public let port: Int

    /// Serves `root` on a free port of `host` (127.0.0.1, another loopback address, `::1`);
    /// over TLS with the PEM `certificate` and `key` when given.
    public init(root: String, certificate: String? = nil, key: String? = nil, host: String = "127.0.0.1") throws {
        var tls: NIOSSLContext?
        if let certificate, let key {
            let chain = try NIOSSLCertificate.fromPEMFile(certificate).map { NIOSSLCertificateSource.certificate($0) }
            tls = try NIOSSLContext(configuration: .makeServerConfiguration(certificateChain: chain, privateKey: .file(key)))
        }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        self.group = group
        let server = box
        do {
            channel = try ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 64)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if let tls { try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls)) }
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                        try channel.pipeline.syncOperations.addHandler(FileHandler(root: root, settings: server))
                    }
                }
                .bind(host: host, port: 0)
                .wait()
        } catch {
            try? group.syncShutdownGracefully()
            throw error
        }
        port = channel.localAddress?.port ?? 0
        url = "\(tls == nil ? "http" : "https")://\(host.contains(":") ? "[\(host)]" : host):\(port)"
    }

    deinit {
        stop()
    }

    /// Every request so far, oldest first.
    public var requests: [Request] { box.settings.withLock { $0.requests } }

    /// The next GET of a body is cut (the connection closed) after `bytes` bytes of it.
    public func breakOnce(afterBytes bytes: Int) {
        box.settings.withLock { $0.breakAfter = bytes }
    }

    /// A GET of `path` is answered 302 to `location` (a path on this server or a URL).
    public func redirect(_ path: String, to location: String) {
        box.settings.withLock { $0.redirects[path] = location }
    }

    /// Whether responses carry an `ETag` (else only `Last-Modified` identifies a file).
    public func sendETag(_ send: Bool) {
        box.settings.withLock { $0.sendETag = send }
    }

    /// The `Content-Type` sent for files whose name ends in `suffix`.
    public func contentType(_ type: String, forSuffix suffix: String) {
        box.settings.withLock { $0.contentTypes[suffix] = type }
    }

    /// Stops listening and ends its thread (once: again, and from deinit, it does nothing).
    public func stop() {
        let first = box.settings.withLock { state in
            defer { state.stopped = true }
            return !state.stopped
        }
        guard first else { return }
        try? channel.close().wait()
        try? group.syncShutdownGracefully()
    }

    /// A self-signed certificate for 127.0.0.1, 127.0.0.2 and localhost, and its key, made by `openssl` in `folder`:
    /// (certificate path, key path).
    public static func makeCertificate(in folder: String) throws -> (certificate: String, key: String) {
        let certificate = folder + "/server-cert.pem", key = folder + "/server-key.pem"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate,
                             "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1,IP:127.0.0.2,DNS:localhost"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw PostgresServer.ServerError(message: "openssl could not make a certificate (is the openssl package installed?)")
        }
        return (certificate, key)
    }
}

/// The settings, shared by the server's handlers (one event-loop thread) and the test.
private final class Box: Sendable {
    let settings = Mutex(HTTPFeedServer.Settings())
}

/// Answers each request from the files under `root`.
private final class FileHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let root: String
    private let settings: Box
    private var head: HTTPRequestHead?

    init(root: String, settings: Box) {
        self.root = root
        self.settings = settings
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): self.head = head
        case .body: break
        case .end:
            guard let head else { return }
            self.head = nil
            respond(to: head, context: context)
        }
    }

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        let path = String(head.uri.prefix { $0 != "?" })
        let range = head.headers["Range"].first
        let (redirect, breakAfter, sendETag, types) = settings.settings.withLock { state in
            state.requests.append(HTTPFeedServer.Request(method: head.method.rawValue, uri: head.uri, range: range,
                                                         headers: head.headers.map { ($0.name, $0.value) }))
            let cut = head.method == .GET && state.redirects[path] == nil ? state.breakAfter : nil
            return (state.redirects[path], cut, state.sendETag, state.contentTypes)
        }
        var headers = HTTPHeaders()
        if let redirect {
            headers.add(name: "Location", value: redirect)
            headers.add(name: "Content-Length", value: "0")
            send(status: .found, headers: headers, body: [], context: context, keepAlive: head.isKeepAlive, version: head.version)
            return
        }
        let file = root + path
        var isDirectory: ObjCBool = false
        guard !path.contains(".."), FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory), !isDirectory.boolValue,
              let data = FileManager.default.contents(atPath: file) else {
            let body = Array("<html><body>404 Not Found</body></html>".utf8)
            headers.add(name: "Content-Type", value: "text/html")
            headers.add(name: "Content-Length", value: String(body.count))
            send(status: .notFound, headers: headers, body: body, context: context, keepAlive: head.isKeepAlive, version: head.version)
            return
        }
        let bytes = [UInt8](data)
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        let etag = "\"\(String(hash, radix: 16))-\(bytes.count)\""
        let modified = (try? FileManager.default.attributesOfItem(atPath: file)[.modificationDate] as? Date) ?? Date()
        let lastModified = Self.httpDate(modified)
        if sendETag { headers.add(name: "ETag", value: etag) }
        headers.add(name: "Last-Modified", value: lastModified)
        headers.add(name: "Accept-Ranges", value: "bytes")
        headers.add(name: "Content-Type", value: types.first { path.hasSuffix($0.key) }?.value
                    ?? (path.hasSuffix(".html") ? "text/html" : "application/octet-stream"))
        var status = HTTPResponseStatus.ok
        var slice = bytes[...]
        if let range, let bounds = Self.bounds(range, size: bytes.count) {
            let validator = head.headers["If-Range"].first
            if validator == nil || validator == (sendETag ? etag : lastModified) || validator == lastModified && !sendETag {
                guard bounds.lowerBound < bytes.count else {
                    headers.replaceOrAdd(name: "Content-Range", value: "bytes */\(bytes.count)")
                    headers.add(name: "Content-Length", value: "0")
                    send(status: .rangeNotSatisfiable, headers: headers, body: [], context: context, keepAlive: head.isKeepAlive,
                         version: head.version)
                    return
                }
                status = .partialContent
                slice = bytes[bounds.lowerBound...min(bounds.upperBound, bytes.count - 1)]
                headers.add(name: "Content-Range", value: "bytes \(slice.startIndex)-\(slice.endIndex - 1)/\(bytes.count)")
            }
        }
        headers.add(name: "Content-Length", value: String(slice.count))
        if head.method == .HEAD { slice = slice.prefix(0) }
        if let breakAfter, breakAfter < slice.count {
            settings.settings.withLock { $0.breakAfter = nil }   // once
            // Sends the head and the first bytes, then closes the connection mid-body.
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))), promise: nil)
            var buffer = context.channel.allocator.buffer(capacity: breakAfter)
            buffer.writeBytes(slice.prefix(breakAfter))
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(buffer)))).whenComplete { _ in channel.close(promise: nil) }
            return
        }
        send(status: status, headers: headers, body: slice, context: context, keepAlive: head.isKeepAlive, version: head.version)
    }

    private func send(status: HTTPResponseStatus, headers: HTTPHeaders, body: ArraySlice<UInt8>, context: ChannelHandlerContext,
                      keepAlive: Bool, version: HTTPVersion) {
        var headers = headers
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: version, status: status, headers: headers))), promise: nil)
        var start = body.startIndex
        while start < body.endIndex {
            let end = min(start + (1 << 16), body.endIndex)
            var buffer = context.channel.allocator.buffer(capacity: end - start)
            buffer.writeBytes(body[start..<end])
            context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
            start = end
        }
        let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        let channel = context.channel
        if !keepAlive { done.whenComplete { _ in channel.close(promise: nil) } }
    }

    private func send(status: HTTPResponseStatus, headers: HTTPHeaders, body: [UInt8], context: ChannelHandlerContext,
                      keepAlive: Bool, version: HTTPVersion) {
        send(status: status, headers: headers, body: body[...], context: context, keepAlive: keepAlive, version: version)
    }

    /// `bytes=N-` or `bytes=N-M` as N...M (M: the last byte).
    private static func bounds(_ range: String, size: Int) -> ClosedRange<Int>? {
        guard range.hasPrefix("bytes="), !range.contains(",") else { return nil }
        let parts = range.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let start = Int(parts[0]) else { return nil }
        let end = parts[1].isEmpty ? Int.max - 1 : Int(parts[1]) ?? Int.max - 1
        return start <= end ? start...end : nil
    }

    private static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }
}
