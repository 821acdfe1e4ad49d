import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A loopback TCP proxy in front of an HTTP server (moto, for S3 feeds) that forwards both ways,
/// logs the head of every request it forwards, and, when armed, cuts one connection after the
/// server has sent a number of bytes on it: a transfer broken mid-body, which moto cannot do.
///
/// ```swift
/// let proxy = try BreakingTCPProxy(to: moto.endpoint)
/// defer { proxy.stop() }
/// proxy.breakOnce(afterBytes: 100_000)
/// ... run batchrun with AWS_ENDPOINT_URL_S3 = proxy.endpoint ...
/// #expect(proxy.requests.last?.range == "bytes=99700-")
/// ```
public final class BreakingTCPProxy: Sendable {
    /// A request's line and headers, as the client sent them.
    public struct RequestHead: Sendable, CustomStringConvertible {
        public var method: String
        /// The request target (path and query).
        public var target: String
        public var headers: [(name: String, value: String)]

        public func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }

        public var range: String? { header("Range") }
        /// The N of `Range: bytes=N-`.
        public var rangeStart: Int? {
            guard let range, range.hasPrefix("bytes="), range.hasSuffix("-") else { return nil }
            return Int(range.dropFirst(6).dropLast())
        }

        public var description: String { "\(method) \(target) Range: \(range ?? "-")" }
    }

    private struct State {
        var requests: [RequestHead] = []
        /// Bytes the server may still send on a connection before it is cut; nil when not armed.
        var breakAfter: Int?
        var broken = 0
    }

    /// `http://127.0.0.1:PORT`, the proxy's address.
    public let endpoint: String
    public var port: UInt16 { relay.port }
    private let relay: LoopbackRelay
    private let state = Mutex(State())

    /// A proxy on a free port of 127.0.0.1 to the server at `target` (`http://127.0.0.1:PORT`).
    public init(to target: String) throws {
        guard let port = target.split(separator: ":").last.flatMap({ UInt16($0.prefix { $0.isNumber }) }) else {
            throw PostgresServer.ServerError(message: "no port in \(target)")
        }
        relay = try LoopbackRelay(to: port)
        endpoint = "http://127.0.0.1:\(relay.port)"
        relay.start(requests: { [self] in forwardRequests(from: $0, to: $1) }, answers: { [self] in forwardAnswers(from: $0, to: $1) })
    }

    /// Arms the proxy: the first connection on which the server sends `count` bytes from now is
    /// cut there (both ways shut), once.
    public func breakOnce(afterBytes count: Int) {
        state.withLock { $0.breakAfter = count }
    }

    /// Every request forwarded so far, in order.
    public var requests: [RequestHead] { state.withLock { $0.requests } }

    /// Connections cut so far.
    public var broken: Int { state.withLock { $0.broken } }

    /// Stops accepting and ends every connection.
    public func stop() {
        relay.stop()
    }

    /// The server's side, copied as it comes, up to the armed byte count.
    private func forwardAnswers(from server: Int32, to client: Int32) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        var sent = 0
        while true {
            let count = read(server, &buffer, buffer.count)
            if count <= 0 { break }
            let cutAt = state.withLock { state -> Int? in
                guard let limit = state.breakAfter, sent + count >= limit else { return nil }
                state.breakAfter = nil
                state.broken += 1
                return max(0, limit - sent)
            }
            if !LoopbackRelay.writeAll(client, buffer[0..<(cutAt ?? count)]) || cutAt != nil { break }
            sent += count
        }
    }

    /// The client's side, copied as it comes; each request's head is logged (a body of
    /// `Content-Length` bytes is passed over; after a chunked body nothing more is logged).
    private func forwardRequests(from client: Int32, to server: Int32) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        var pending: [UInt8] = []
        var bodyLeft = 0
        var logging = true
        while true {
            let count = read(client, &buffer, buffer.count)
            if count <= 0 || !LoopbackRelay.writeAll(server, buffer[0..<count]) { break }
            guard logging else { continue }
            pending.append(contentsOf: buffer[0..<count])
            while true {
                if bodyLeft > 0 {
                    let skipped = min(bodyLeft, pending.count)
                    pending.removeFirst(skipped)
                    bodyLeft -= skipped
                    if bodyLeft > 0 { break }
                }
                guard let end = Self.endOfHead(pending) else { break }
                let head = Self.parse(String(decoding: pending[..<end], as: UTF8.self))
                pending.removeFirst(end + 4)
                state.withLock { $0.requests.append(head) }
                bodyLeft = Int(head.header("Content-Length") ?? "") ?? 0
                if head.header("Transfer-Encoding")?.lowercased().contains("chunked") == true { logging = false; break }
            }
        }
    }

    /// The index of the blank line (`\r\n\r\n`) that ends a head.
    private static func endOfHead(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4) where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
    }

    private static func parse(_ head: String) -> RequestHead {
        let lines = head.components(separatedBy: "\r\n")
        let parts = (lines.first ?? "").split(separator: " ").map(String.init)
        let headers = lines.dropFirst().compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        return RequestHead(method: parts.first ?? "", target: parts.count > 1 ? parts[1] : "", headers: headers)
    }
}
