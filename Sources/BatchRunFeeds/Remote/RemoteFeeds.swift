/// What the import and `--resume` ask of a remote feed, in builds with network feeds or
/// without (then every remote feed is an error saying so).
package enum RemoteFeeds {
    /// The identity of the object at `feed` now (one request for its first byte); errors name
    /// the feed as `displayPath`.
    package static func identity(of feed: RemoteFeed, displayPath: String, watch: FeedWatch? = nil) throws(FeedError) -> RemoteIdentity {
        #if NetworkFeeds
        do {
            return try HTTPByteSource.identity(of: feed, watch: watch)
        } catch {
            throw FeedError(file: displayPath, line: 0, message: error.message)
        }
        #else
        throw FeedError(file: displayPath, line: 0, message: RemoteFeed.notBuilt)
        #endif
    }
}
