/// Where a store is: an SQLite file or a PostgreSQL database. A job file's `store: PATH`,
/// `store: { sqlite: PATH, busy_timeout: 5s }` or `store: { postgres: "postgresql://USER@HOST:PORT/DB" }`.
///
/// The kind of database is read from the location once, here: a `postgresql://` or
/// `postgres://` URL is a PostgreSQL database, anything else an SQLite file.
///
/// ```swift
/// let spec = StoreSpec(location: "postgresql://batch@db.internal/nightly")   // spec.kind == .postgres
/// let store = try Store(spec, model: model)
/// ```
public struct StoreSpec: Sendable, Hashable {
    /// The database a store lives in.
    public enum Kind: String, Sendable, Hashable {
        case sqlite, postgres

        /// The kind a location names: `postgresql://...` and `postgres://...` are PostgreSQL.
        ///
        /// ```swift
        /// StoreSpec.Kind(location: "var/nightly.sqlite")   // .sqlite
        /// ```
        package init(location: String) {
            self = location.hasPrefix("postgresql://") || location.hasPrefix("postgres://") ? .postgres : .sqlite
        }
    }

    public var kind: Kind
    /// SQLite: the file, resolved against the job file's folder (or the current folder for
    /// `--store`). PostgreSQL: the URL (it holds no password).
    package var path: String
    /// How long a write waits for another program's lock (SQLite's busy timeout,
    /// PostgreSQL's `lock_timeout`).
    package var busyTimeout: Double
    /// SQLite: the folders a queue worker lets the file lie in; checked again as it is opened
    /// (nil: anywhere).
    package var confinement: PathConfinement?

    /// PostgreSQL: the role a confined worker's item runs its SQL as (`worker --item-role`),
    /// batchrun's own statements on its `_batchrun_` tables excepted; nil: the URL's user.
    package var role: String?

    /// PostgreSQL: how long a transaction may stay idle before the server ends it, so the rows it
    /// locked are free again. A paused process (SIGSTOP, a frozen machine) holds its locks
    /// until then: a queue's sessions and a queue item's fenced run set it, so the item can be
    /// taken over once its lease runs out. nil: never ended.
    package var idleTimeout: Double?

    /// PostgreSQL: how long a lost connection to the server is made again for, from the
    /// first loss, before the work in flight fails (`store: { postgres: URL, reconnect: 60s }`).
    package var reconnect: Double = StoreSpec.defaultReconnect

    /// `reconnect`'s default: 60 seconds.
    package static let defaultReconnect = 60.0

    package init(kind: Kind = .sqlite, path: String, busyTimeout: Double = 5) {
        self.kind = kind
        self.path = path
        self.busyTimeout = busyTimeout
    }

    /// The store at `location`, its kind read from it (`Kind(location:)`).
    public init(location: String, busyTimeout: Double = 5) {
        self.init(kind: Kind(location: location), path: location, busyTimeout: busyTimeout)
    }

    /// True for a database on a server (PostgreSQL), false for a file on this machine (SQLite).
    package var isOnServer: Bool { kind == .postgres }

    /// `text` with any password it holds replaced by `***`, for messages.
    ///
    /// ```swift
    /// StoreSpec.redacted("postgresql://u:secret@h/db")   // postgresql://u:***@h/db
    /// ```
    package static func redacted(_ text: String) -> String {
        var result = text
        if let schemeEnd = result.range(of: "://") {
            let authorityEnd = result[schemeEnd.upperBound...].firstIndex { $0 == "/" || $0 == "?" } ?? result.endIndex
            if let at = result[schemeEnd.upperBound..<authorityEnd].firstIndex(of: "@"),
               let colon = result[schemeEnd.upperBound..<at].firstIndex(of: ":") {
                result.replaceSubrange(result.index(after: colon)..<at, with: "***")
            }
        }
        // password=... in the query
        if let mark = result.firstIndex(of: "?") {
            let query = result[result.index(after: mark)...].split(separator: "&", omittingEmptySubsequences: false).map { pair in
                pair.hasPrefix("password=") ? "password=***" : String(pair)
            }
            result = String(result[...mark]) + query.joined(separator: "&")
        }
        return result
    }
}
