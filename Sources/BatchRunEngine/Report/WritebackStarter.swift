import Dispatch
import Foundation

/// Starts writing a file's bytes to disk while the file is still being written, a few
/// megabytes at a time, on a helper thread. ext4 writes a file back before a rename over an
/// older file returns (its safeguard for replace-by-rename): for a report of 116 MB that was
/// 50 ms on the writing thread after its last byte, and is now done beside the writing.
///
/// ```swift
/// var writeback = WritebackStarter(descriptor: descriptor)
/// defer { writeback.finish() }   // before the descriptor is closed
/// try handle.write(contentsOf: piece); writeback.wrote(piece.count)
/// ```
struct WritebackStarter: ~Copyable {
    private let descriptor: Int32
    private let queue = DispatchQueue(label: "batchrun.writeback")
    /// Bytes written, and the part of them whose writeback was started.
    private var written: Int64 = 0
    private var started: Int64 = 0

    /// How much is written before its writeback starts.
    private static let step: Int64 = 8 << 20

    package init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// `count` more bytes were written at the file's end.
    package mutating func wrote(_ count: Int) {
        written += Int64(count)
        guard written - started >= Self.step else { return }
        let (descriptor, offset, length) = (descriptor, started, written - started)
        #if os(Linux)
        // On Linux, DONTNEED starts the range's writeback without waiting for it; its pages,
        // just written and still dirty or being written, stay in the cache.
        queue.async { _ = posix_fadvise(descriptor, off_t(offset), off_t(length), POSIX_FADV_DONTNEED) }
        #endif
        started = written
    }

    /// Waits until every writeback this started has been handed to the kernel; the descriptor
    /// may be closed after it, not before.
    package func finish() {
        queue.sync {}
    }
}
