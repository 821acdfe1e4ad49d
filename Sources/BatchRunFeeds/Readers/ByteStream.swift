import BatchRunStore
import Foundation

/// Reads a feed's bytes (see `ByteSource`: a file, decompressed or not) in fixed-size chunks,
/// one byte at a time, so memory does not grow with the feed.
struct ByteStream {
    private let source: any ByteSource
    private var buffer: [UInt8]
    private var position = 0
    private var count = 0
    private var finished = false
    private(set) var bytesRead: UInt64 = 0
    /// Why the feed's bytes stopped before their end (a truncated or corrupt feed), once met.
    package private(set) var failure: ByteSourceError?
    /// The bytes before the buffer's first one, for the feed's fingerprint.
    private var recent = RecentBytes()

    /// Opens a feed, with the feed's error when it cannot be read; `startingAt` goes on from
    /// that offset without handing over the bytes before it.
    package init(feed path: String, displayPath: String, compression: FeedCompression = .none, startingAt offset: Int64 = 0,
         confinement: PathConfinement? = nil, remote: RemoteFeed? = nil, watch: FeedWatch? = nil, chunkSize: Int = 1 << 16) throws(FeedError) {
        source = try ByteSources.open(path: path, compression: compression, displayPath: displayPath, startingAt: offset,
                                      confinement: confinement, remote: remote, watch: watch)
        buffer = [UInt8](repeating: 0, count: chunkSize)
        bytesRead = UInt64(offset)
    }

    /// The offset of the next byte `next()` returns.
    package var offset: Int64 { Int64(bytesRead) - Int64(count - position) }

    /// `FeedFingerprint.hash` of the `count` bytes before `offset`, when this stream holds them.
    package func hashOfBytes(beforeOffset count: Int) -> UInt64? {
        buffer.withUnsafeBufferPointer { buffer in
            recent.hash(of: count, endingAt: position, in: buffer, bufferOffset: Int64(bytesRead) - Int64(self.count))
        }
    }

    /// The next byte, or nil at the end of the feed (or where it failed: see `failure`).
    @inline(__always)
    package mutating func next() -> UInt8? {
        if position < count {
            defer { position += 1 }
            return buffer[position]
        }
        guard refill() else { return nil }
        defer { position += 1 }
        return buffer[position]
    }

    /// The next byte without consuming it.
    mutating func peek() -> UInt8? {
        if position < count { return buffer[position] }
        guard refill() else { return nil }
        return buffer[position]
    }

    private mutating func refill() -> Bool {
        if finished { return false }
        buffer.withUnsafeBufferPointer { recent.keep(UnsafeBufferPointer(rebasing: $0[..<count])) }
        do {
            count = try buffer.withUnsafeMutableBytes { bytes throws(ByteSourceError) in try source.read(into: bytes) }
        } catch {
            failure = error as? ByteSourceError ?? ByteSourceError(message: "\(error)")
            count = 0
        }
        position = 0
        if count == 0 {
            finished = true
            return false
        }
        bytesRead += UInt64(count)
        return true
    }
}
