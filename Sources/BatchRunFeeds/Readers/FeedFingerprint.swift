import BatchRunStore
import Foundation

/// What identifies a feed file as it was when a batch of it committed, cheaply: its size,
/// modification time, and hashes of its first 64 KB and of the 4 KB that end where the next
/// batch starts. A resumed import compares them instead of reading the part done again.
/// A compressed feed's offsets are in its decompressed bytes: its second window is the file's
/// last bytes.
///
/// An import takes them with a `FeedFingerprinter` (the head hash once, the window from the
/// bytes its reader holds, size and time from `fstat`); `matches` reads them from the file.
///
/// ```swift
/// guard FeedFingerprint.matches(position, path: "data/sessions.csv") else { throw changed }
/// ```
package enum FeedFingerprint {
    /// The bytes the head hash covers.
    static let headWindow: Int64 = 64 * 1024
    /// The bytes the second hash covers in the positions written now. Checkpoints written before
    /// it was recorded (`FeedPosition.tailWindow` nil) covered 64 KB, which cost a 64 KB hash
    /// per batch; 4 KB still holds many rows, and size, time and head are compared as well.
    package static let tailWindow: Int64 = 4 * 1024
    package static let legacyTailWindow: Int64 = 64 * 1024

    /// True when the feed at `path` is still the one `position` was taken in (read from the
    /// file, once per resumed step). `confinement`: the folders a queue worker lets the item read in.
    package static func matches(_ position: FeedPosition, path: String, compressed: Bool = false, confinement: PathConfinement? = nil) -> Bool {
        guard position.remote == nil,
              let handle = try? PathConfinement.openForReading(path, within: confinement) else { return false }
        defer { try? handle.close() }
        let window = position.tailWindow ?? legacyTailWindow
        guard let (size, modified) = attributes(of: handle.fileDescriptor) else { return false }
        let tailEnd = compressed ? size : position.offset
        // The time within a microsecond: checkpoints written before took it through Foundation's
        // `Date`, whose arithmetic may differ from this in the last bits.
        return size == position.feedSize && abs(modified - position.feedModified) < 1e-6
            && hash(handle.fileDescriptor, from: 0, count: min(headWindow, size)) == position.headHash
            && hash(handle.fileDescriptor, from: max(0, tailEnd - window), count: min(window, tailEnd)) == position.tailHash
    }

    /// Size and modification time of an open file, from `fstat` (no owner-name look-ups).
    package static func attributes(of descriptor: Int32) -> (size: Int64, modified: Double)? {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return nil }
        return (Int64(status.st_size), Double(status.st_mtim.tv_sec) + Double(status.st_mtim.tv_nsec) / 1e9)
    }

    /// FNV-1a's starting value: the hash of no bytes.
    package static let emptyHash: UInt64 = 0xcbf2_9ce4_8422_2325

    /// FNV-1a over `bytes`, going on from `hash` (the hash of the bytes before them).
    package static func hash(_ bytes: UnsafeBufferPointer<UInt8>, continuing hash: UInt64 = emptyHash) -> UInt64 {
        var hash = hash
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return hash
    }

    /// FNV-1a over `count` bytes of an open file from `offset` (the hash of no bytes when they cannot be read).
    package static func hash(_ descriptor: Int32, from offset: Int64, count: Int64) -> UInt64 {
        guard count > 0 else { return emptyHash }
        var bytes = [UInt8](repeating: 0, count: Int(count))
        var filled = 0
        while filled < bytes.count {
            let read = bytes.withUnsafeMutableBytes { buffer in
                pread(descriptor, buffer.baseAddress! + filled, buffer.count - filled, off_t(offset) + off_t(filled))
            }
            if read < 0, errno == EINTR { continue }
            guard read > 0 else { return emptyHash }
            filled += read
        }
        return bytes.withUnsafeBufferPointer { hash($0) }
    }
}
