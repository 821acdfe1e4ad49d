import BatchRunStore
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A local feed file's bytes, read as they are. Its end before the size it had when opened is
/// an error: another program truncated it while it was read.
final class FileByteSource: ByteSource {
    private let handle: FileHandle
    private let sizeAtOpen: UInt64
    private var bytesRead: UInt64 = 0
    private var closed = false

    package init(path: String, confinement: PathConfinement? = nil) throws(PathConfinementError) {
        handle = try PathConfinement.openForReading(path, within: confinement)
        sizeAtOpen = FeedLimits.size(of: handle)
    }

    deinit {
        if !closed { try? handle.close() }
    }

    package func read(into buffer: UnsafeMutableRawBufferPointer) throws(ByteSourceError) -> Int {
        guard !closed, let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        while true {
            let count = systemRead(handle.fileDescriptor, base, buffer.count)
            if count < 0 {
                if errno == EINTR { continue }
                throw ByteSourceError(message: "cannot read the feed: \(String(cString: strerror(errno)))")
            }
            if count == 0 {
                closed = true
                try? handle.close()
                if bytesRead < sizeAtOpen {
                    throw ByteSourceError(message: "the feed was truncated while being read (\(sizeAtOpen) bytes when opened, it ended after \(bytesRead))")
                }
                return 0
            }
            bytesRead += UInt64(count)
            return count
        }
    }

    package func skip(to offset: Int64) throws(ByteSourceError) {
        guard offset >= 0, offset <= Int64(sizeAtOpen), (try? handle.seek(toOffset: UInt64(offset))) != nil else {
            throw ByteSourceError(message: "cannot continue at byte \(offset): the file has \(sizeAtOpen) bytes")
        }
        bytesRead = UInt64(offset)
    }
}

/// The C library's `read`, named apart from `ByteSource.read(into:)`.
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
    Glibc.read(descriptor, buffer, count)
    #else
    Darwin.read(descriptor, buffer, count)
    #endif
}
