import BatchRunStore

/// A stream of bytes under a feed reader: a local file, or another source decompressed
/// (gzip, zstd). Readers parse what `read(into:)` gives; where a record starts is counted in
/// these bytes (for a compressed feed, the decompressed ones).
///
/// ```swift
/// let source = try ByteSources.open(path: "data/flights.csv.gz", compression: .gzip)
/// var buffer = [UInt8](repeating: 0, count: 1 << 16)
/// while case let count = try buffer.withUnsafeMutableBytes({ try source.read(into: $0) }), count > 0 { ... }
/// ```
protocol ByteSource: AnyObject {
    /// Fills the start of `buffer` with the next bytes and says how many; 0 only at the end.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(ByteSourceError) -> Int
    /// Goes on from byte `offset` of the stream (at or after the bytes read so far), without
    /// handing over the bytes before it: a file seeks, a decompressor decompresses up to it.
    func skip(to offset: Int64) throws(ByteSourceError)
}

/// Why a feed's bytes could not be read: a file truncated while read, a corrupt or truncated
/// compressed stream. Readers turn it into a `FeedError` naming the feed and the line reached.
package struct ByteSourceError: BatchRunError {
    package var message: String
    /// True when the read stopped because its job was cancelled (`FeedWatch`), not the feed.
    package var cancelled = false

    package var code: String { "feed.bytes" }
    package var description: String { message }

    package init(message: String, cancelled: Bool = false) {
        self.message = message
        self.cancelled = cancelled
    }
}

extension ByteSource {
    /// Reads and drops bytes up to `offset`, `read` so far: how a stream that cannot seek skips.
    package func discard(from read: Int64, to offset: Int64) throws(ByteSourceError) {
        var position = read
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 1)
        defer { scratch.deallocate() }
        while position < offset {
            let wanted = Int(min(Int64(scratch.count), offset - position))
            let count = try self.read(into: UnsafeMutableRawBufferPointer(rebasing: scratch[0..<wanted]))
            guard count > 0 else {
                throw ByteSourceError(message: "cannot continue at byte \(offset): the feed ends at byte \(position)")
            }
            position += Int64(count)
        }
    }
}
