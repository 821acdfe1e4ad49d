import BatchRunStore

/// Opens the bytes of a feed: the file or the remote object, decompressed as `compression` says.
enum ByteSources {
    /// `startingAt`: the offset in the (decompressed) stream to go on from; errors name the feed
    /// as `displayPath`. `remote`: an `http(s)://` feed (then `path` is its URL), whose object
    /// must still be its `expected` identity when it has one. `watch`: asked after each read.
    package static func open(path: String, compression: FeedCompression, displayPath: String, startingAt offset: Int64 = 0,
                     confinement: PathConfinement? = nil, remote: RemoteFeed? = nil, watch: FeedWatch? = nil) throws(FeedError) -> any ByteSource {
        let file: any ByteSource
        if let remote {
            #if NetworkFeeds
            do {
                let http = try HTTPByteSource(feed: remote, expected: remote.expected, startingAt: compression == .none ? offset : 0, watch: watch)
                if compression == .none { return watch.map { WatchedByteSource(http, watch: $0) } ?? http }
                file = http
            } catch {
                throw FeedError(file: displayPath, line: 0, message: error.message)
            }
            #else
            throw FeedError(file: displayPath, line: 0, message: RemoteFeed.notBuilt)
            #endif
        } else {
            do {
                file = try FileByteSource(path: path, confinement: confinement)
            } catch {
                throw FeedError(file: displayPath, line: 0, message: "cannot open the feed file" + (confinement == nil ? "" : ": \(error)"))
            }
        }
        do {
            let source: any ByteSource = switch compression {
            case .none: file
            case .gzip: try GzipByteSource(file)
            case .zstd: try ZstdByteSource(file)
            }
            if offset > 0 { try source.skip(to: offset) }
            return watch.map { WatchedByteSource(source, watch: $0) } ?? source
        } catch {
            throw FeedError(file: displayPath, line: 0, message: error.message)
        }
    }
}
