extension StoreSpec {
    /// The store at `location` as a user writes it (`--store`, a report's `store`, a queue's
    /// location): a PostgreSQL database for `postgresql://...` and `postgres://...`, else an
    /// SQLite file. The one place above the backends that tells them apart by their text.
    ///
    /// ```swift
    /// StoreSpec.at("postgresql://batch@db.internal/nightly").kind   // .postgres
    /// StoreSpec.at("var/nightly.sqlite").kind                        // .sqlite
    /// ```
    package static func at(_ location: String, busyTimeout: Double = 5) -> StoreSpec {
        StoreSpec(kind: isPostgresURL(location) ? .postgres : .sqlite, path: location, busyTimeout: busyTimeout)
    }
}
