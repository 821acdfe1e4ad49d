import Foundation

/// Reads a file in fixed-size chunks, so memory does not grow with the file.
struct ByteStream {
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    private var position = 0
    private var finished = false
    private let chunkSize: Int
    private let sizeAtOpen: UInt64
    private(set) var bytesRead: UInt64 = 0
    /// The size the file had when opened, when it ended before that (it was truncated).
    var truncatedFrom: UInt64? { finished && bytesRead < sizeAtOpen ? sizeAtOpen : nil }

    /// Opens a feed, with the feed's error when it cannot be read; `startingAt` skips the
    /// bytes before that offset without reading them.
    init(feed path: String, displayPath: String, startingAt offset: Int64 = 0, confinement: PathConfinement? = nil) throws(FeedError) {
        do {
            try self.init(path: path, confinement: confinement)
        } catch let error as PathConfinementError where confinement != nil {
            throw FeedError(file: displayPath, line: 0, message: "cannot open the feed file: \(error)")
        } catch {
            throw FeedError(file: displayPath, line: 0, message: "cannot open the feed file")
        }
        guard offset > 0 else { return }
        guard offset <= Int64(sizeAtOpen), (try? handle.seek(toOffset: UInt64(offset))) != nil else {
            throw FeedError(file: displayPath, line: 0, message: "cannot continue at byte \(offset): the file has \(sizeAtOpen) bytes")
        }
        bytesRead = UInt64(offset)
    }

    /// The offset of the next byte `next()` returns.
    var offset: Int64 { Int64(bytesRead) - Int64(buffer.count - position) }

    init(path: String, chunkSize: Int = 1 << 16, confinement: PathConfinement? = nil) throws {
        handle = try PathConfinement.openForReading(path, within: confinement)
        self.chunkSize = chunkSize
        self.sizeAtOpen = FeedLimits.size(of: handle)
    }

    /// The next byte, or nil at the end of the file.
    @inline(__always)
    mutating func next() -> UInt8? {
        if position < buffer.count {
            defer { position += 1 }
            return buffer[position]
        }
        guard refill() else { return nil }
        defer { position += 1 }
        return buffer[position]
    }

    /// The next byte without consuming it.
    mutating func peek() -> UInt8? {
        if position < buffer.count { return buffer[position] }
        guard refill() else { return nil }
        return buffer[position]
    }

    private mutating func refill() -> Bool {
        if finished { return false }
        let data = handle.readData(ofLength: chunkSize)
        if data.isEmpty {
            finished = true
            try? handle.close()
            return false
        }
        buffer = [UInt8](data)
        bytesRead += UInt64(data.count)
        position = 0
        return true
    }
}
