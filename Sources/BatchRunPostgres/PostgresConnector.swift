#if PostgreSQL
import Foundation
import PostgresNIO

/// Makes a connection to the server as libpq would for the location's `sslmode`, through
/// PostgresNIO's own `tls:` option:
///
/// | sslmode | first | then, when the server refused or TLS failed |
/// |---|---|---|
/// | `disable` | without TLS | - |
/// | `allow` | without TLS | over TLS |
/// | `prefer` | over TLS, without it when the server does not do TLS | without TLS |
/// | `require` | over TLS only | - |
/// | `verify-ca`, `verify-full` | over TLS only, the certificate verified | - |
///
/// PostgresNIO's `.prefer` goes on without TLS only when the server answers that it does not
/// do TLS; libpq also tries again without TLS when the TLS connection or its login failed (a
/// `hostnossl` line), so that second attempt is made here. A Unix socket never uses TLS (as
/// libpq). Failures are `PostgresConnectFailure`s that say which: the server's own message for a
/// refused login, `certificate` and why, no TLS at the server, or why it could not be reached.
///
/// ```swift
/// let connection = try PostgresConnector.connect(try PostgresLocation(url: "postgresql://batch@db.internal/nightly?sslmode=verify-full"))
/// ```
enum PostgresConnector {
    /// One way of connecting: without TLS, TLS if the server does it, or TLS only.
    private enum Attempt {
        case plain
        case tls(PostgresConnection.Configuration.TLS)
    }

    package static func connect(_ location: PostgresLocation) throws -> PostgresConnection {
        if location.isUnixSocket { return try attempt(.plain, location) }
        switch location.sslMode {
        case .disable:
            return try attempt(.plain, location)
        case .allow:
            do {
                return try attempt(.plain, location)
            } catch let first as PostgresConnectFailure where first.reachedServer {
                return try retry(after: first, over: "TLS", location) { try attempt(.tls(.require(try tlsContext(location))), location) }
            }
        case .prefer:
            let context = try tlsContext(location)
            do {
                return try attempt(.tls(.prefer(context)), location)
            } catch let first as PostgresConnectFailure where first.reachedServer {
                return try retry(after: first, over: "without TLS", location) { try attempt(.plain, location) }
            }
        case .require, .verifyCA, .verifyFull:
            return try attempt(.tls(.require(try tlsContext(location))), location)
        }
    }

    /// libpq's second attempt of `allow` and `prefer`; when it fails too, both reasons are given.
    private static func retry(after first: PostgresConnectFailure, over way: String, _ location: PostgresLocation,
                              _ second: () throws -> PostgresConnection) throws -> PostgresConnection {
        do {
            return try second()
        } catch let failure as PostgresConnectFailure {
            if failure.message == first.message { throw failure }
            // A server that is starting or shutting down (or gone) on either try may be back soon.
            let lost = [first, failure].first { $0.storeFailure == .connectionLost }
            throw PostgresConnectFailure(message: "\(first.message); then, \(way): \(failure.message)",
                                         reachedServer: lost == nil || lost?.reachedServer == true, sqlState: lost?.sqlState ?? first.sqlState)
        }
    }

    private static func attempt(_ attempt: Attempt, _ location: PostgresLocation) throws -> PostgresConnection {
        var configuration: PostgresConnection.Configuration
        if location.isUnixSocket {
            configuration = .init(unixSocketPath: location.socketPath, username: location.user, password: location.password, database: location.database)
        } else {
            let tls: PostgresConnection.Configuration.TLS
            switch attempt {
            case .plain: tls = .disable
            case .tls(let mode): tls = mode
            }
            configuration = .init(host: location.host, port: location.port, username: location.user, password: location.password,
                                  database: location.database, tls: tls)
        }
        // 100 years stands for libpq's connect_timeout=0 (no limit).
        configuration.options.connectTimeout = .milliseconds(Int64((location.connectTimeout ?? 3_153_600_000) * 1000))
        configuration.options.additionalStartupParameters = [("application_name", location.applicationName)]
        do {
            return try PostgresConnection.connect(on: PostgresConnection.defaultEventLoopGroup.any(), configuration: configuration,
                                                  id: 0, logger: Logger(label: "batchrun.postgres")).wait()
        } catch {
            throw failure(error, location)
        }
    }

    // MARK: TLS

    /// The TLS context of the location's `sslmode`, `sslrootcert`, `sslcert` and `sslkey`, as
    /// libpq uses them: the server's certificate is verified (its CA; and its host name for
    /// `verify-full`) when the mode says so, or when the root certificate file exists (libpq
    /// does that for `require` and `prefer` too); the client certificate is sent when its file
    /// exists.
    static func tlsContext(_ location: PostgresLocation) throws -> NIOSSLContext {
        var configuration = TLSConfiguration.makeClientConfiguration()
        let fileManager = FileManager.default
        let rootCert = location.sslRootCert
        if rootCert == "system" {
            configuration.trustRoots = .default
            configuration.certificateVerification = .fullVerification
        } else if fileManager.fileExists(atPath: rootCert) {
            configuration.trustRoots = .file(rootCert)
            configuration.certificateVerification = location.sslMode == .verifyFull ? .fullVerification : .noHostnameVerification
        } else if location.sslMode.verifiesCertificate {
            throw PostgresConnectFailure(message: "root certificate file \"\(rootCert)\" does not exist: give the CA's certificate in "
                                         + "sslrootcert (or PGSSLROOTCERT), use the system's CAs with sslrootcert=system, "
                                         + "or take an sslmode that does not verify the server's certificate")
        } else {
            configuration.certificateVerification = .none
            configuration.trustRoots = .certificates([])   // nothing verified: the system's CAs not even loaded
        }
        if fileManager.fileExists(atPath: location.sslCert) {
            guard fileManager.fileExists(atPath: location.sslKey) else {
                throw PostgresConnectFailure(message: "certificate present, but not private key file \"\(location.sslKey)\"")
            }
            try checkKeyPermissions(location.sslKey)
            do {
                configuration.certificateChain = try NIOSSLCertificate.fromPEMFile(location.sslCert).map { .certificate($0) }
            } catch {
                throw PostgresConnectFailure(message: "could not read certificate file \"\(location.sslCert)\" (\(error))")
            }
            do {
                configuration.privateKey = .privateKey(try NIOSSLPrivateKey(file: location.sslKey, format: .pem))
            } catch {
                throw PostgresConnectFailure(message: "could not read private key file \"\(location.sslKey)\" (\(error))")
            }
        }
        do {
            return try NIOSSLContext(configuration: configuration)
        } catch {
            throw PostgresConnectFailure(message: "could not load the TLS settings (sslrootcert \(rootCert)): \(error)")
        }
    }

    /// libpq's rule: a private key readable by others is refused.
    private static func checkKeyPermissions(_ path: String) throws {
        var status = stat()
        guard stat(path, &status) == 0 else { return }
        let mode = status.st_mode & 0o777
        let allowed: mode_t = status.st_uid == 0 ? 0o640 : 0o600
        if mode & ~allowed != 0 {
            throw PostgresConnectFailure(message: "private key file \"\(path)\" has group or world access; file must have permissions "
                                         + "u=rw (0600) or less if owned by the current user, or permissions u=rw,g=r (0640) or less if owned by root")
        }
    }

    // MARK: Failures

    /// What users read of a failed connection attempt.
    package static func failure(_ error: any Error, _ location: PostgresLocation) -> PostgresConnectFailure {
        guard let error = error as? PSQLError else {
            return PostgresConnectFailure(message: "cannot reach the server at \(location) (\(error))")
        }
        switch error.code {
        case .server:
            let message = error.serverInfo?[.message] ?? "\(error.code)"
            var hint = ""
            if error.serverInfo?[.sqlState] == "28000", message.hasSuffix("no encryption"), location.sslMode == .disable {
                hint = " (the server takes TLS connections only here: sslmode is \(location.sslMode.rawValue))"
            }
            return PostgresConnectFailure(message: "the server refused the connection: \(message)\(hint)", reachedServer: true,
                                          sqlState: error.serverInfo?[.sqlState])
        case .sslUnsupported:
            return PostgresConnectFailure(message: "the server at \(location) does not do TLS (sslmode=\(location.sslMode.rawValue))",
                                          reachedServer: true)
        case .authMechanismRequiresPassword:
            return PostgresConnectFailure(message: "the server asks a password of user \"\(location.user)\" and none was given "
                                          + "(PGPASSWORD, ~/.pgpass or PGPASSFILE)", reachedServer: true)
        case .unsupportedAuthMechanism, .saslError:
            return PostgresConnectFailure(message: "the login as \"\(location.user)\" failed (\(error.underlying.map { "\($0)" } ?? "\(error.code)"))",
                                          reachedServer: true)
        default:
            break
        }
        let underlying = error.underlying
        if let channelError = underlying as? ChannelError, case .connectTimeout = channelError {
            let seconds = location.connectTimeout.map { "\(Int($0)) s" } ?? "the time allowed"
            return PostgresConnectFailure(message: "cannot reach the server at \(location) (no answer within \(seconds): connect_timeout)")
        }
        if let extra = underlying as? NIOSSLExtraError, extra == .failedToValidateHostname {
            return PostgresConnectFailure(message: "the server's certificate is not for host \"\(location.host)\" (sslmode=verify-full checks the host name)",
                                          reachedServer: true)
        }
        if let tlsError = underlying as? NIOSSLError {
            if case .handshakeFailed(let boring) = tlsError, "\(boring)".contains("CERTIFICATE_VERIFY_FAILED") {
                return PostgresConnectFailure(message: "\(PostgresCertificateDiagnosis.explain(location)) (sslmode=\(location.sslMode.rawValue))",
                                              reachedServer: true)
            }
            return PostgresConnectFailure(message: "the TLS handshake with the server at \(location) failed (\(tlsError))", reachedServer: true)
        }
        if underlying is BoringSSLError || underlying is NIOSSLExtraError {
            return PostgresConnectFailure(message: "the TLS handshake with the server at \(location) failed (\(underlying.map { "\($0)" } ?? ""))",
                                          reachedServer: true)
        }
        return PostgresConnectFailure(message: "cannot reach the server at \(location) (\(reason(underlying) ?? "\(error.code)"))")
    }

    /// A network error in words: `Connection refused`, `No such file or directory`.
    private static func reason(_ error: (any Error)?) -> String? {
        guard let error else { return nil }
        switch error {
        case let error as IOError: return String(cString: strerror(error.errnoCode))
        case let error as NIOConnectionError:
            if let first = error.connectionErrors.first { return reason(first.error) }
            if error.dnsAError != nil || error.dnsAAAAError != nil { return "cannot resolve host name \"\(error.host)\"" }
            return "\(error)"
        case let error as SocketAddressError: return "\(error)"
        default: return "\(error)"
        }
    }
}
#endif
