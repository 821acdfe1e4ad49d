import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A TCP proxy between batchrun and a PostgreSQL server that forwards everything both ways
/// and, when armed (`dropAfterWriteCommits`), drops a connection right after forwarding the
/// COMMIT of a write transaction (one begun `BEGIN READ WRITE`): the server commits, and its
/// answer never reaches the client. A network failure at the worst moment, made on purpose.
///
/// ```swift
/// let proxy = try PostgresProxy(to: url)
/// defer { proxy.stop() }
/// proxy.dropAfterWriteCommits(3)   // the third write COMMIT from now is not answered
/// ... run batchrun against proxy.url ...
/// #expect(proxy.dropped == 1)
/// ```
public final class PostgresProxy: Sendable {
    /// `url` with the server's host and port replaced by the proxy's.
    public let url: String
    private let relay: LoopbackRelay
    private let state = Mutex(State())
    /// Clients whose answers are no longer forwarded: a COMMIT of theirs is being dropped. Set
    /// before the COMMIT goes to the server, so that its answer cannot slip through before the
    /// client's side is shut (seen on a busy machine: the run then never lost the connection).
    private let silenced = Mutex(Set<Int32>())

    private struct State {
        /// Write COMMITs still to forward before one is dropped; nil when not armed.
        var commitsBeforeDrop: Int?
        /// Only write transactions that ran a statement containing this count (uppercase; nil: every one).
        var marker: String?
        var dropped = 0
    }

    /// A proxy on a free port of 127.0.0.1 to the server of `url` (`postgresql://USER@127.0.0.1:PORT/DB`).
    public init(to url: String) throws {
        guard let portRange = url.range(of: #":[0-9]+/"#, options: .regularExpression),
              let port = UInt16(url[portRange].dropFirst().dropLast()) else { throw PostgresServer.ServerError(message: "no port in \(url)") }
        relay = try LoopbackRelay(to: port)
        self.url = url.replacingCharacters(in: portRange, with: ":\(relay.port)/")
            .replacingOccurrences(of: "@localhost:", with: "@127.0.0.1:")
        relay.start(requests: { [self] in forwardRequests(from: $0, to: $1) }, answers: { [self] in forwardAnswers(from: $0, to: $1) })
    }

    /// Arms the proxy: the `count`-th write COMMIT from now is forwarded, then its connection
    /// dropped; with `marker`, only COMMITs of write transactions that ran a statement containing
    /// it count (`"COPY"`: an import's batches, not the run's own bookkeeping).
    public func dropAfterWriteCommits(_ count: Int = 1, of marker: String? = nil) {
        state.withLock { state in
            state.commitsBeforeDrop = max(1, count)
            state.marker = marker?.uppercased()
        }
    }

    /// Connections dropped after a COMMIT so far.
    public var dropped: Int { state.withLock { $0.dropped } }

    /// Stops accepting and closes every connection.
    public func stop() {
        relay.stop()
    }

    /// The server's side: copied as it comes.
    private func forwardAnswers(from server: Int32, to client: Int32) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(server, &buffer, buffer.count)
            if count <= 0 || silenced.withLock({ $0.contains(client) }) || !LoopbackRelay.writeAll(client, buffer[0..<count]) { break }
        }
    }

    /// The client's side, message by message: the startup messages (no type byte), then typed
    /// ones, noting the SQL of each Query ('Q') and Parse ('P') to tell a write transaction's COMMIT.
    private func forwardRequests(from client: Int32, to server: Int32) {
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        var startingUp = true, inWriteTransaction = false, committing = false, marked = false
        // The descriptor is closed (and may be reused) only once both directions ended.
        defer { silenced.withLock { _ = $0.remove(client) } }
        loop: while true {
            let count = read(client, &buffer, buffer.count)
            if count <= 0 { break }
            pending.append(contentsOf: buffer[0..<count])
            while true {
                let header = startingUp ? 0 : 1
                guard pending.count >= header + 4 else { break }
                let length = Int(pending[header]) << 24 | Int(pending[header + 1]) << 16 | Int(pending[header + 2]) << 8 | Int(pending[header + 3])
                guard pending.count >= header + length else { break }
                let message = Array(pending[0..<(header + length)])
                pending.removeFirst(header + length)
                var drop = false
                if startingUp {
                    let code = message.count >= 8 ? Int(message[4]) << 24 | Int(message[5]) << 16 | Int(message[6]) << 8 | Int(message[7]) : 0
                    startingUp = code == 80877103 || code == 80877104   // SSLRequest, GSSENCRequest: the startup comes next
                } else {
                    let type = message[0]
                    if type == UInt8(ascii: "Q") || type == UInt8(ascii: "P") {
                        let sql = Self.sql(of: message, isParse: type == UInt8(ascii: "P")).uppercased()
                        if sql.hasPrefix("BEGIN") {
                            inWriteTransaction = sql.contains("READ WRITE")
                            marked = false
                        }
                        if let marker = state.withLock({ $0.marker }), sql.contains(marker) { marked = true }
                        if sql == "COMMIT" || sql == "ROLLBACK" {
                            committing = sql == "COMMIT" && inWriteTransaction && (marked || state.withLock { $0.marker == nil })
                            inWriteTransaction = false
                        }
                    }
                    // The COMMIT is carried out at the Sync that ends its messages (or at once, as a Query).
                    if committing && (type == UInt8(ascii: "S") || type == UInt8(ascii: "Q")) {
                        committing = false
                        drop = state.withLock { state in
                            guard let left = state.commitsBeforeDrop else { return false }
                            if left > 1 {
                                state.commitsBeforeDrop = left - 1
                                return false
                            }
                            state.commitsBeforeDrop = nil
                            state.dropped += 1
                            return true
                        }
                    }
                }
                if drop { silenced.withLock { _ = $0.insert(client) } }
                if !LoopbackRelay.writeAll(server, message[...]) { break loop }
                if drop {
                    // The client's side goes at once (its answer never comes); the server reads
                    // the COMMIT already sent before it sees the end of its connection.
                    shutdown(client, Int32(SHUT_RDWR))
                    Thread.sleep(forTimeInterval: 0.2)
                    break loop
                }
            }
        }
    }

    /// The SQL of a Query message, or of a Parse message (after the statement's name).
    private static func sql(of message: [UInt8], isParse: Bool) -> String {
        var start = 5
        if isParse {
            while start < message.count && message[start] != 0 { start += 1 }
            start += 1
        }
        var end = start
        while end < message.count && message[end] != 0 { end += 1 }
        guard start <= end, end <= message.count else { return "" }
        return String(decoding: message[start..<end], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
