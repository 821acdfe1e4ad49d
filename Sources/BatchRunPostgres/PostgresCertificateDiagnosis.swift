#if PostgreSQL
import Foundation
import PostgresNIO
import Synchronization

/// Says why a server's certificate failed verification. BoringSSL only says that it failed, so
/// this fetches the certificate the server presents (PostgreSQL's `SSLRequest`, then a TLS
/// handshake that records the presented chain and accepts nothing) and looks at it: expired, not
/// yet valid, or else not signed by a CA of `sslrootcert`.
///
/// ```swift
/// PostgresCertificateDiagnosis.explain(location)
/// // "the server's certificate is not signed by a CA in sslrootcert /home/batch/.postgresql/root.crt"
/// ```
enum PostgresCertificateDiagnosis {
    package static func explain(_ location: PostgresLocation) -> String {
        let notSigned = location.sslRootCert == "system"
            ? "the server's certificate is not signed by a CA this system trusts (sslrootcert=system)"
            : "the server's certificate is not signed by a CA in sslrootcert \(location.sslRootCert)"
        guard let leaf = presentedCertificates(location).first else { return notSigned + " (or it is out of date)" }
        let now = time(nil)
        let formatter = ISO8601DateFormatter()
        if leaf.notValidAfter < now {
            return "the server's certificate expired on \(formatter.string(from: Date(timeIntervalSince1970: TimeInterval(leaf.notValidAfter))))"
        }
        if leaf.notValidBefore > now {
            return "the server's certificate is not valid before \(formatter.string(from: Date(timeIntervalSince1970: TimeInterval(leaf.notValidBefore))))"
        }
        return notSigned
    }

    /// The chain the server presents, leaf first; empty when it cannot be had.
    private static func presentedCertificates(_ location: PostgresLocation) -> [NIOSSLCertificate] {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = .none
        guard let context = try? NIOSSLContext(configuration: configuration) else { return [] }
        let presented = Presented()
        let bootstrap = ClientBootstrap(group: PostgresConnection.defaultEventLoopGroup.any())
            .connectTimeout(.seconds(Int64(location.connectTimeout ?? 10)))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(SSLRequestHandler(context: context) { chain in
                        presented.certificates.withLock { $0 = chain }
                    })
                }
            }
        guard let channel = try? bootstrap.connect(host: location.host, port: location.port).wait() else { return [] }
        // The handshake ends (refused by the callback) and the channel closes; never wait longer than connect_timeout.
        let limit = channel.eventLoop.scheduleTask(in: .seconds(Int64(location.connectTimeout ?? 10))) { channel.close(promise: nil) }
        try? channel.closeFuture.wait()
        limit.cancel()
        return presented.certificates.withLock { $0 }
    }

    /// What the handshake's callback hands over, read once the channel closed.
    private final class Presented: Sendable {
        let certificates = Mutex<[NIOSSLCertificate]>([])
    }

    /// Sends `SSLRequest`; on the server's `S` adds a TLS handler that hands over the chain
    /// presented and fails the handshake.
    private final class SSLRequestHandler: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        let context: NIOSSLContext
        let record: @Sendable ([NIOSSLCertificate]) -> Void

        init(context: NIOSSLContext, record: @escaping @Sendable ([NIOSSLCertificate]) -> Void) {
            self.context = context
            self.record = record
        }

        func channelActive(context: ChannelHandlerContext) {
            var request = context.channel.allocator.buffer(capacity: 8)
            request.writeInteger(UInt32(8))
            request.writeInteger(UInt32(80_877_103))   // the SSLRequest code
            context.writeAndFlush(wrapOutboundOut(request), promise: nil)
        }

        /// The TLS handler is in place: what follows is not the answer to `SSLRequest`.
        var handedOver = false

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard !handedOver else { return }
            handedOver = true
            var answer = unwrapInboundIn(data)
            let record = self.record
            let channel = context.channel
            guard answer.readInteger(as: UInt8.self) == UInt8(ascii: "S"),
                  let tls = try? NIOSSLClientHandler(context: self.context, serverHostname: nil, customVerificationCallback: { chain, promise in
                      record(chain)
                      promise.succeed(.failed)
                      channel.close(promise: nil)   // the chain is all this connection was for
                  }) else {
                context.close(promise: nil)
                return
            }
            do {
                try context.pipeline.syncOperations.addHandler(tls, position: .before(self))
            } catch {
                context.close(promise: nil)
            }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}
#endif
