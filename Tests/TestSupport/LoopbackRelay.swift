import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The plumbing the tests' TCP proxies (`PostgresProxy`, `BreakingTCPProxy`) share: a listener
/// on a free port of 127.0.0.1 that connects each client it accepts to a port of 127.0.0.1 and
/// runs the proxy's two forwarding functions, one a direction, each on a thread of its own. When
/// a function returns, its connection's two sockets are shut; the second to return closes them.
final class LoopbackRelay: Sendable {
    /// Copies bytes from the first socket to the second until it returns.
    typealias Forward = @Sendable (_ from: Int32, _ to: Int32) -> Void

    private struct State {
        var sockets: Set<Int32> = []
        /// Forwarding threads still running per connection, by the client's descriptor.
        var threads: [Int32: Int] = [:]
        var stopped = false
    }

    /// The port clients connect to.
    let port: UInt16
    private let targetPort: UInt16
    private let listener: Int32
    private let state = Mutex(State())

    /// Listens on a free port of 127.0.0.1 (nothing is accepted before `start`).
    init(to targetPort: UInt16) throws {
        self.targetPort = targetPort
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var address = Self.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 64) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        guard listening else {
            close(listener)
            throw PostgresServer.ServerError(message: "the proxy cannot listen: errno \(errno)")
        }
        port = UInt16(bigEndian: address.sin_port)
    }

    /// Accepts connections from now on: `requests` forwards a client's bytes to the server,
    /// `answers` the server's to the client.
    func start(requests: @escaping Forward, answers: @escaping Forward) {
        let relay = self
        Thread.detachNewThread { relay.acceptConnections(requests: requests, answers: answers) }
    }

    /// Stops accepting and shuts every connection.
    func stop() {
        let sockets = state.withLock { state in
            state.stopped = true
            return state.sockets
        }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for socket in sockets { shutdown(socket, Int32(SHUT_RDWR)) }
    }

    /// Sends all of `bytes`; false when the socket is gone.
    static func writeAll(_ socket: Int32, _ bytes: ArraySlice<UInt8>) -> Bool {
        var offset = bytes.startIndex
        while offset < bytes.endIndex {
            let written = bytes[offset...].withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written <= 0 {
                if written < 0 && errno == EINTR { continue }
                return false
            }
            offset += written
        }
        return true
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    private func acceptConnections(requests: @escaping Forward, answers: @escaping Forward) {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: targetPort)
            let connected = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            let accepted = state.withLock { state in
                guard connected == 0 && !state.stopped else { return false }
                state.sockets.formUnion([client, server])
                state.threads[client] = 2
                return true
            }
            guard accepted else {
                close(client)
                close(server)
                continue
            }
            // Each side's bytes go on at once: a forward that sends a message at a time (the
            // PostgreSQL proxy) otherwise meets Nagle's wait for the ACK of the message before,
            // which the other end delays by 40 ms; a batch of several messages then took about
            // 0.3 s, and a test's 1,000 batches 5 minutes.
            var on: Int32 = 1
            for socket in [client, server] {
                _ = setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
            }
            let relay = self
            Thread.detachNewThread {
                answers(server, client)
                relay.closePair(client, server)
            }
            Thread.detachNewThread {
                requests(client, server)
                relay.closePair(client, server)
            }
        }
    }

    /// Shuts both sides of a connection; the second of its two threads to get here closes
    /// them (not the first: the other thread may still read or write its descriptor).
    private func closePair(_ client: Int32, _ server: Int32) {
        let last = state.withLock { state in
            let left = (state.threads[client] ?? 1) - 1
            state.threads[client] = left == 0 ? nil : left
            if left == 0 { state.sockets.subtract([client, server]) }
            return left == 0
        }
        shutdown(client, Int32(SHUT_RDWR))
        shutdown(server, Int32(SHUT_RDWR))
        if last {
            close(client)
            close(server)
        }
    }
}
