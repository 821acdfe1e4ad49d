#if NetworkFeeds
import AsyncHTTPClient
import BatchRunStore
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL

/// A remote feed's bytes, streamed from an HTTP(S) GET (section 14) with backpressure (see
/// `ResponseChannel`): memory holds at most about 1 MB of the body, whatever the feed's size.
///
/// Each request is built by a `RangedRequestBuilder` (S3 signs each). A transfer that breaks
/// (the connection closed, a read timed out, the body ended short of its length) goes on from
/// the byte reached with `Range: bytes=N-` and `If-Range`, up to `retries` times with backoff;
/// the object's identity (`ETag` and length, or `Last-Modified`) must match the first
/// response's, so no byte is read twice or from another version of the object.
///
/// Redirects (up to 5) are followed here, not by the HTTP client, so each one is checked: no
/// `https` to `http`, the feed's headers dropped on the way to another origin, and for a
/// confined item (`RemoteFeed.network`) each host's address checked and connected to as checked.
final class HTTPByteSource: ByteSource {
    /// The client's settings (TLS, timeouts); a client is made from them per host and port.
    private let configuration: HTTPClient.Configuration
    /// The clients made so far, by `HOST:PORT` (one, keyed "", when addresses are not checked).
    private var clients: [String: HTTPClient] = [:]
    private let requests: any RangedRequestBuilder
    private let feed: RemoteFeed
    private let retries: Int
    /// The object's identity, from the first response (or the one a resumed run expects).
    package private(set) var identity: RemoteIdentity?
    /// The offset of the next byte handed over.
    package private(set) var position: Int64
    /// Where the current response's body ends in the object, when it says.
    private var end: Int64?
    private var channel: ResponseChannel?
    private var task: Task<Void, Never>?
    private var chunk: ByteBuffer?
    private var finished = false
    private var shutDown = false
    /// Asked while the reader waits for bytes: a cancel or the item's limits stop a stalled read.
    private let watch: FeedWatch?
    /// A transfer that sends fewer than `stallBytes` while the reader waited `read_timeout` for
    /// them has stalled (a trickle that resets the silence timer with every byte never trips
    /// that): how long the reader waited since `stallBytes` last came, and the bytes since.
    /// Counted only while the reader waits, so a reader held up by its database is no stall.
    private var waited = Duration.zero
    private var windowBytes = 0
    /// Stalls in a row, over reconnections: a server that answers each Range request with a
    /// byte or two ends the feed after `retries` of them.
    private var stalls = 0
    static let stallBytes = 1024

    /// Opens the feed and waits for the first response's head, so a refused connection, a 404
    /// or an HTML page fails here. `expected`: the identity a checkpoint recorded (a changed
    /// object is an error); `startingAt`: the first byte wanted (a Range request when > 0).
    package init(feed: RemoteFeed, requests: (any RangedRequestBuilder)? = nil, expected: RemoteIdentity? = nil,
         startingAt offset: Int64 = 0, retries: Int = 3, watch: FeedWatch? = nil) throws(ByteSourceError) {
        self.feed = feed
        self.watch = watch
        self.requests = try Self.requests(for: feed, given: requests)
        self.retries = retries
        identity = expected
        position = offset
        configuration = try Self.configuration(for: feed)
        do throws(ByteSourceError) {
            if let failure = try start(through: nil) { throw ByteSourceError(message: failure) }
        } catch {
            close()
            throw error
        }
    }

    deinit {
        close()
    }

    /// The identity of the object at `feed` now, from a request for its first byte.
    package static func identity(of feed: RemoteFeed, requests: (any RangedRequestBuilder)? = nil,
                                 watch: FeedWatch? = nil) throws(ByteSourceError) -> RemoteIdentity {
        let source = try HTTPByteSource(feed: feed, requests: requests, startingAt: 0, probe: true, watch: watch)
        defer { source.close() }
        return source.identity ?? RemoteIdentity(etag: nil, lastModified: nil, length: nil)
    }

    private init(feed: RemoteFeed, requests: (any RangedRequestBuilder)?, startingAt offset: Int64, probe: Bool,
                 watch: FeedWatch?) throws(ByteSourceError) {
        self.feed = feed
        self.requests = try Self.requests(for: feed, given: requests)
        retries = 0
        self.watch = watch
        position = offset
        configuration = try Self.configuration(for: feed)
        do throws(ByteSourceError) {
            if let failure = try start(through: 0) { throw ByteSourceError(message: failure) }
        } catch {
            close()
            throw error
        }
    }

    /// The requests of `feed` (`given` when there are): signed for S3 (`s3://`), plain for HTTP(S).
    package static func requests(for feed: RemoteFeed, given: (any RangedRequestBuilder)? = nil) throws(ByteSourceError)
        -> any RangedRequestBuilder {
        if let given { return given }
        guard feed.isS3 else { return PlainRangedRequests(feed: feed) }
        guard case .s3(let location) = feed.location else {
            throw ByteSourceError(message: "\(feed.url) names no object; write s3://BUCKET/KEY")
        }
        return try S3RangedRequests(location: location)
    }

    package func read(into buffer: UnsafeMutableRawBufferPointer) throws(ByteSourceError) -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        var attempt = 0
        while true {
            if var current = chunk, current.readableBytes > 0 {
                let count = min(buffer.count, current.readableBytes)
                current.withUnsafeReadableBytes { bytes in
                    base.copyMemory(from: bytes.baseAddress!, byteCount: count)
                }
                current.moveReaderIndex(forwardBy: count)
                chunk = current.readableBytes > 0 ? current : nil
                position += Int64(count)
                return count
            }
            if finished { return 0 }
            let broken: String
            if let channel {
                // Each read_timeout of waiting must bring stallBytes: a trickle is a stall.
                if waited > .seconds(feed.readTimeout) {
                    stalls += 1
                    (waited, windowBytes) = (.zero, 0)
                    var tries = stalls - 1
                    try retry(after: "fewer than \(Self.stallBytes) bytes came in \(DurationFormat.jobFile.string(feed.readTimeout)) "
                              + "(read_timeout)", attempt: &tries)
                    continue
                }
                // Woken every quarter second: a cancel or a limit stops a read that waits.
                let waitStarted = ContinuousClock.now
                let next = channel.next(waitingAtMost: 0.25)
                waited += ContinuousClock.now - waitStarted
                guard let event = next else {
                    try watch?.check(readBytes: 0)
                    continue
                }
                switch event {
                case .chunk(let buffer):
                    chunk = buffer
                    windowBytes += buffer.readableBytes
                    if windowBytes >= Self.stallBytes { (waited, windowBytes, stalls) = (.zero, 0, 0) }
                    continue
                case .end:
                    if let end, position < end {
                        broken = "the body ended at byte \(position), before byte \(end)"
                    } else {
                        finished = true
                        stopTransfer()
                        close()
                        return 0
                    }
                case .failed(let error):
                    broken = Self.describe(error, feed: feed)
                case .head:
                    broken = "the server sent a second response"
                }
            } else {
                broken = "the transfer stopped"
            }
            try retry(after: broken, attempt: &attempt)
        }
    }

    /// A broken transfer: goes on from `position` with a Range request, a few times; throws
    /// once `retries` did not mend it.
    private func retry(after broken: String, attempt: inout Int) throws(ByteSourceError) {
        stopTransfer()
        guard attempt < retries else {
            throw ByteSourceError(message: "the transfer broke at byte \(position) and \(retries) retries did not finish it: \(broken)")
        }
        attempt += 1
        // 0.2 s, 0.4 s, 0.8 s, ...
        Backoff.exponential(0.2).wait(before: attempt)
        try watch?.check(readBytes: 0)
        if let failure = try start(through: nil), attempt >= retries {
            throw ByteSourceError(message: "the transfer broke at byte \(position) and \(retries) retries did not finish it: \(failure)")
        }
    }

    package func skip(to offset: Int64) throws(ByteSourceError) {
        guard offset > position else { return }
        // Within the chunk at hand: read on; further: a new request from `offset`, so the bytes
        // before it are not downloaded (a resumed import reads only what is left).
        if offset - position <= Int64(chunk?.readableBytes ?? 0) {
            try discard(from: position, to: offset)
            return
        }
        stopTransfer()
        position = offset
        if let failure = try start(through: nil) { throw ByteSourceError(message: failure) }
    }

    /// Sends the request for the bytes from `position` (following its redirects) and waits for
    /// its head: checks the status, the content type, and the object's identity against what was
    /// read so far. Returns why no response came (a retry may help); throws what a retry cannot mend.
    @discardableResult
    private func start(through last: Int64?) throws(ByteSourceError) -> String? {
        let ifRange = position > 0 ? identity?.ifRange : nil
        var request = try requests.request(from: position, through: last, ifRange: ifRange)
        var visited: Set<String> = [request.url]
        while true {
            let event = try send(request)
            switch event {
            case .head(let status, let reason, let headers):
                if let location = Self.redirectLocation(status: status, headers: headers) {
                    stopTransfer()
                    guard visited.count <= Self.maxRedirects else {
                        throw ByteSourceError(message: "\(requests.displayName): more than \(Self.maxRedirects) redirects")
                    }
                    request = try Self.redirect(request, to: location, displayName: requests.displayName)
                    guard visited.insert(request.url).inserted else {
                        throw ByteSourceError(message: "\(requests.displayName): the redirects go round in a cycle")
                    }
                    continue
                }
                try accept(status: status, reason: reason, headers: headers, last: last)
                return nil
            case .failed(let failure):
                stopTransfer()
                return Self.describe(failure, feed: feed)
            case .chunk, .end:
                stopTransfer()
                return "no response"
            }
        }
    }

    /// Sends `request` and waits for its first event (a head, or why none came), watched.
    private func send(_ request: RangedRequest) throws(ByteSourceError) -> ResponseChannel.Event {
        let client = try client(for: request.url)
        var outgoing = HTTPClientRequest(url: request.url)
        outgoing.method = .GET
        for header in request.headers { outgoing.headers.add(name: header.name, value: header.value) }
        let channel = ResponseChannel()
        let deadline = NIODeadline.now() + Self.amount(feed.connectTimeout + feed.readTimeout)
        task = Task {
            do {
                let response = try await client.execute(outgoing, deadline: deadline)
                let headers = response.headers.map { (name: $0.name, value: $0.value) }
                guard await channel.send(.head(status: Int(response.status.code), reason: response.status.reasonPhrase,
                                               headers: headers)) else { return }
                for try await buffer in response.body {
                    guard await channel.send(.chunk(buffer)) else { return }
                }
                _ = await channel.send(.end)
            } catch {
                _ = await channel.send(.failed(error))
            }
        }
        self.channel = channel
        (waited, windowBytes) = (.zero, 0)
        var event = channel.next(waitingAtMost: 0.25)
        while event == nil {
            do throws(ByteSourceError) { try watch?.check(readBytes: 0) } catch {
                stopTransfer()
                throw error
            }
            event = channel.next(waitingAtMost: 0.25)
        }
        return event!
    }

    /// The client for `url`'s host and port. For a confined item the host's address is checked
    /// here (`NetworkRules`) and the client connects to that address only, whatever the name
    /// resolves to later; the certificate is still checked against the name.
    private func client(for url: String) throws(ByteSourceError) -> HTTPClient {
        let key = feed.network == nil ? "" : NetworkRules.hostAndPort(of: url).map { "\($0.host):\($0.port)" } ?? url
        if let client = clients[key] { return client }
        let settings = try feed.network?.pinned(configuration, for: url) ?? configuration
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: settings)
        clients[key] = client
        return client
    }

    private func accept(status: Int, reason: String, headers: [(name: String, value: String)], last: Int64?) throws(ByteSourceError) {
        func header(_ name: String) -> String? { headers.first { $0.name.lowercased() == name }?.value }
        let fresh = RemoteIdentity(status: status, headers: headers)
        if status == 416, let known = identity?.length ?? fresh.length, position >= known {
            finished = true   // nothing is left after the checkpoint
            return
        }
        guard (200..<300).contains(status) else {
            let body = errorBody()
            stopTransfer()
            throw ByteSourceError(message: requests.failure(status: status, reason: reason, body: body))
        }
        if let type = header("content-type")?.lowercased(), type.hasPrefix("text/html") {
            stopTransfer()
            throw ByteSourceError(message: "\(requests.displayName) sent an HTML page (Content-Type: text/html), not the feed: "
                + "an error or login page? Check the URL and its headers")
        }
        if let known = identity {
            if !known.isSame(as: fresh) {
                stopTransfer()
                throw ByteSourceError(message: "\(requests.displayName) changed while it was read (it was \(known), it is \(fresh) now)")
            }
        } else {
            identity = fresh
        }
        if status == 206 {
            guard let range = header("content-range"), let start = Self.rangeStart(range), start == position else {
                stopTransfer()
                throw ByteSourceError(message: "\(requests.displayName) answered a Range request from byte \(position) "
                    + "with another range (\(header("content-range") ?? "no Content-Range"))")
            }
            end = Self.rangeEnd(range).map { $0 + 1 }
        } else if position > 0 {
            // The whole object came back: the server ignores Range (the identity matched).
            let wanted = position
            end = fresh.length
            position = 0
            if last == nil { try discard(from: 0, to: wanted) }
        } else {
            end = fresh.length
        }
    }

    /// The first KB of an error response's body (S3 names its error code there).
    private func errorBody() -> String {
        var bytes: [UInt8] = []
        while bytes.count < 1024, let channel {
            guard case .chunk(let buffer)? = channel.next(waitingAtMost: feed.readTimeout) else { break }
            bytes += buffer.readableBytesView.prefix(1024 - bytes.count)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private func stopTransfer() {
        channel?.close()
        task?.cancel()
        channel = nil
        task = nil
        chunk = nil
    }

    /// Ends every transfer and the clients (their connections); called at the end and by deinit.
    package func close() {
        stopTransfer()
        guard !shutDown else { return }
        shutDown = true
        for client in clients.values { try? client.syncShutdown() }
        clients = [:]
    }

    /// `bytes 100-199/1000` gives 100; `rangeEnd` 199.
    private static func rangeStart(_ header: String) -> Int64? {
        guard let dash = header.firstIndex(of: "-") else { return nil }
        return Int64(header[..<dash].split(separator: " ").last ?? "")
    }

    private static func rangeEnd(_ header: String) -> Int64? {
        guard let dash = header.firstIndex(of: "-"), let slash = header.firstIndex(of: "/") else { return nil }
        return Int64(header[header.index(after: dash)..<slash])
    }

    private static func amount(_ seconds: Double) -> TimeAmount {
        .milliseconds(Int64(seconds * 1000))
    }

    private static func configuration(for feed: RemoteFeed) throws(ByteSourceError) -> HTTPClient.Configuration {
        if let name = feed.unsetVariables().first {
            throw ByteSourceError(message: "a header uses ${env.\(name)}, which is not set in the environment")
        }
        var tls = TLSConfiguration.makeClientConfiguration()
        if let caFile = feed.caFile {
            guard FileManager.default.isReadableFile(atPath: caFile) else {
                throw ByteSourceError(message: "ca_file \(caFile) cannot be read")
            }
            tls.additionalTrustRoots = [.file(caFile)]
        }
        var configuration = HTTPClient.Configuration(
            tlsConfiguration: tls,
            redirectConfiguration: .disallow,
            timeout: .init(connect: amount(feed.connectTimeout), read: amount(feed.readTimeout)),
            decompression: .disabled)
        // A refused connection is an answer: fail at once rather than retry until the deadline.
        configuration.connectionPool.retryConnectionEstablishment = false
        return configuration
    }

    /// What went wrong, in words that say what to do; never the URL's query nor a header.
    package static func describe(_ error: any Error, feed: RemoteFeed) -> String {
        if let error = error as? HTTPClientError {
            switch error {
            case .readTimeout: return "no bytes came for \(feed.readTimeout) s (read_timeout)"
            case .connectTimeout: return "no connection within \(feed.connectTimeout) s (connect_timeout)"
            case .deadlineExceeded: return "no answer within \(feed.connectTimeout + feed.readTimeout) s (connect_timeout + read_timeout)"
            case .remoteConnectionClosed: return "the server closed the connection"
            default: break
            }
        }
        let text = String(describing: error)
        let lowered = text.lowercased()
        if lowered.contains("refused") {
            return "connection refused: nothing listens at \(feed.displayURL)'s host and port"
        }
        if error is NIOSSLError || lowered.contains("certificate") || lowered.contains("handshake") {
            return "TLS failed, the server's certificate is not trusted (\(text)); if your own CA signed it, "
                + "name the CA's certificate with ca_file:"
        }
        return text
    }
}
#endif
