import BatchRunStore

/// Why a glob's parts could not be listed.
///
/// ```swift
/// throw FeedGlobError.noMatch(pattern: "data/part-*.csv.gz", lookedIn: "/srv/nightly/data/")
/// ```
package enum FeedGlobError: BatchRunError, Equatable {
    /// Nothing matched: a load of no parts is a mistake, not an empty load.
    case noMatch(pattern: String, lookedIn: String)
    /// A walk read more folder entries than `FeedGlob.maximumEntries`.
    case tooManyEntries(folder: String, limit: Int)
    /// A folder on the way, or a part, could not be read.
    case unreadable(path: String, reason: String)

    package var code: String { "feed.parts" }
    package var message: String { description }

    package var description: String {
        switch self {
        case .noMatch(let pattern, let folder):
            "no feed part matches \(pattern) (looked in \(folder))"
        case .tooManyEntries(let folder, let limit):
            "the glob read more than \(limit) folder entries (under \(folder)) without ending; name a narrower folder before its first wildcard"
        case .unreadable(let path, let reason):
            "feed part \(path) cannot be read: \(reason)"
        }
    }
}
