#if PostgreSQL
import BatchRunStore

/// Why a connection to a PostgreSQL server could not be made, as users read it: the server
/// refused the login (its own message, e.g. `password authentication failed for user "batch"`),
/// its certificate failed verification (`certificate` and why), it does not do TLS, or it could
/// not be reached (and why: refused, no answer within `connect_timeout`).
///
/// ```swift
/// throw PostgresConnectFailure(message: "the server refused the connection: password authentication failed for user \"batch\"")
/// ```
struct PostgresConnectFailure: StoreDatabaseError, BatchRunError {
    package let message: String
    /// The server answered (a refused login, a TLS handshake): libpq tries the other way of
    /// `allow` and `prefer` after such a failure, not after an unreachable server.
    var reachedServer = false
    /// The server's SQLSTATE when it refused the login.
    var sqlState: String?

    package var code: String { "store.cannot-connect" }
    package var description: String { message }

    /// A server that cannot be reached, or that is starting or shutting down (`57P03`), may be
    /// back soon: a connection lost mid-run is made again within the store's `reconnect`. A
    /// refused login or a certificate that fails verification will not change by waiting.
    package var storeFailure: StoreFailure? {
        !reachedServer || sqlState == "57P03" || sqlState == "57P01" ? .connectionLost : nil
    }

    package var databaseMessage: String { message }
}
#endif
