import BatchRunStore

/// What a queue's location names, read once: a folder or a PostgreSQL database. Commands
/// ask it instead of looking at the text themselves.
///
/// ```swift
/// switch QueueLocation("postgresql://batch@db/nightly") {
/// case .folder(let path): print("a folder at \(path)")
/// case .database(let url): print("a table in \(url)")
/// }
/// ```
package enum QueueLocation: Sendable, Hashable {
    /// A queue folder (the one holding `pending/`), as given.
    case folder(String)
    /// A queue in the PostgreSQL database at this URL.
    case database(String)

    package init(_ location: String) {
        self = StoreSpec(location: location).isOnServer ? .database(location) : .folder(location)
    }

    /// The folder that the relative paths of an item submitted here resolve against: the
    /// queue folder; nil for a database (an item's own folder).
    package var baseDirectory: String? {
        switch self {
        case .folder(let path): path
        case .database: nil
        }
    }

    /// Opens the queue (making a folder's folders, or the database's table, when missing).
    package func open() throws -> any Queue {
        switch self {
        case .folder(let path): try QueueFolder(path: path)
        case .database(let url):
            #if PostgreSQL
            try PostgresQueue(url: url)
            #else
            throw StoreError.cannotOpen(path: url, reason: "this build of BatchRunKit has no PostgreSQL support (the package's PostgreSQL trait is off)")
            #endif
        }
    }
}
