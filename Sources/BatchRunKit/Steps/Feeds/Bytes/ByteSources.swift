/// Opens the bytes of a feed: the file, decompressed as `compression` says.
enum ByteSources {
    /// `startingAt`: the offset in the (decompressed) stream to go on from; errors name the feed
    /// as `displayPath`.
    static func open(path: String, compression: FeedCompression, displayPath: String, startingAt offset: Int64 = 0,
                     confinement: PathConfinement? = nil) throws(FeedError) -> any ByteSource {
        let file: FileByteSource
        do {
            file = try FileByteSource(path: path, confinement: confinement)
        } catch {
            throw FeedError(file: displayPath, line: 0, message: "cannot open the feed file" + (confinement == nil ? "" : ": \(error)"))
        }
        do {
            let source: any ByteSource = switch compression {
            case .none: file
            case .gzip: try GzipByteSource(file)
            case .zstd: try ZstdByteSource(file)
            }
            if offset > 0 { try source.skip(to: offset) }
            return source
        } catch {
            throw FeedError(file: displayPath, line: 0, message: error.message)
        }
    }
}
