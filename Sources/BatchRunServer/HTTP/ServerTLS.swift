import NIOSSL

/// `serve --tls-cert FILE --tls-key FILE`: the certificate chain and key, in PEM, that the page
/// is served with over HTTPS (TLS 1.2 or later, through SwiftNIO's own TLS stack).
///
/// ```swift
/// let tls = try ServerTLS(certificate: "/etc/batchrun/page.crt", key: "/etc/batchrun/page.key").configuration()
/// ```
package struct ServerTLS: Sendable {
    package var certificate: String
    package var key: String

    package init(certificate: String, key: String) {
        self.certificate = certificate
        self.key = key
    }

    /// The server's TLS configuration, checked by making a context of it; throws naming the
    /// file that cannot be read.
    package func configuration() throws -> TLSConfiguration {
        let chain: [NIOSSLCertificate]
        do { chain = try NIOSSLCertificate.fromPEMFile(certificate) } catch {
            throw ServerTLSError(file: certificate, reason: "not a readable PEM certificate (\(error))")
        }
        guard !chain.isEmpty else { throw ServerTLSError(file: certificate, reason: "holds no certificate") }
        let key: NIOSSLPrivateKey
        do { key = try NIOSSLPrivateKey(file: self.key, format: .pem) } catch {
            throw ServerTLSError(file: self.key, reason: "not a readable PEM private key (\(error))")
        }
        var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        configuration.minimumTLSVersion = .tlsv12
        do { _ = try NIOSSLContext(configuration: configuration) } catch {
            throw ServerTLSError(file: certificate, reason: "does not go with the key \(self.key) (\(error))")
        }
        return configuration
    }
}
