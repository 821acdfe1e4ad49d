#if PostgreSQL
/// libpq's `sslmode`: whether a connection uses TLS and what it verifies of the server's
/// certificate. `prefer` is the default, as in libpq.
///
/// ```swift
/// PostgresSSLMode(rawValue: "verify-full")   // .verifyFull: TLS, the certificate's CA and its host name
/// PostgresSSLMode.prefer.usesTLSFirst          // true: TLS first, without TLS when that fails
/// ```
package enum PostgresSSLMode: String, Sendable, CaseIterable {
    /// Never TLS.
    case disable
    /// Without TLS first; over TLS when the server refuses that.
    case allow
    /// TLS first; without TLS when the server does not do TLS or the TLS connection fails.
    case prefer
    /// TLS only; the certificate verified as `verify-ca` when a root certificate file exists.
    case require
    /// TLS only; the certificate must be signed by a CA of `sslrootcert`.
    case verifyCA = "verify-ca"
    /// TLS only; as `verify-ca`, and the certificate must be for the host connected to.
    case verifyFull = "verify-full"

    /// TLS is tried first (`prefer`) or is the only way (`require` and stronger).
    var usesTLSFirst: Bool { self != .disable && self != .allow }

    /// A connection without TLS is never made.
    var requiresTLS: Bool { self == .require || self == .verifyCA || self == .verifyFull }

    /// The server's certificate must be verified: a missing root certificate file is an error.
    var verifiesCertificate: Bool { self == .verifyCA || self == .verifyFull }
}
#endif
