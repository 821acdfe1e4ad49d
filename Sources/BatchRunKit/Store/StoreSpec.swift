/// Where a store is: an SQLite file or a PostgreSQL database. A job file's `store: PATH`,
/// `store: { sqlite: PATH, busy_timeout: 5s }` or `store: { postgres: "postgresql://USER@HOST:PORT/DB" }`.
///
/// ```swift
/// let store = try Store(StoreSpec(kind: .postgres, path: "postgresql://batch@db.internal/nightly"), model: model)
/// ```
public struct StoreSpec: Sendable, Hashable {
    /// The database a store lives in.
    public enum Kind: String, Sendable, Hashable {
        case sqlite, postgres
    }

    public var kind: Kind
    /// SQLite: the file, resolved against the job file's folder (or the current folder for
    /// `--store`). PostgreSQL: the URL (it holds no password).
    public var path: String
    /// How long a write waits for another program's lock (SQLite's busy timeout,
    /// PostgreSQL's `lock_timeout`).
    public var busyTimeout: Double

    public init(kind: Kind = .sqlite, path: String, busyTimeout: Double = 5) {
        self.kind = kind
        self.path = path
        self.busyTimeout = busyTimeout
    }

    /// True for `postgresql://...` and `postgres://...`.
    public static func isPostgresURL(_ text: String) -> Bool {
        text.hasPrefix("postgresql://") || text.hasPrefix("postgres://")
    }
}
