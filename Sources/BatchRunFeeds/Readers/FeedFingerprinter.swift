import BatchRunStore
import Foundation

/// Takes an importing feed file's `FeedFingerprint` after each batch without reading again
/// what the import has read: the head hash once per run, the window before the batch's end from
/// the bytes the reader holds (from the file only just after a resume, when it does not hold
/// them yet), size and modification time from `fstat` of the file opened once.
///
/// ```swift
/// let fingerprinter = FeedFingerprinter(path: "data/sessions.csv", compressed: false, confinement: nil)
/// let position = fingerprinter.position(at: reader.nextRecord, rejectedBytes: 0) { count in
///     reader.hashOfBytes(beforeNextRecord: count)
/// }
/// ```
package final class FeedFingerprinter {
    private let path: String
    private let compressed: Bool
    private let confinement: PathConfinement?
    /// The file, opened once (within `confinement`), as the reader opened it; nil until first used.
    private var handle: FileHandle?
    private var head: UInt64?
    /// A compressed feed's second hash (its file's last bytes), with the size and time it was taken at.
    private var compressedTail: (hash: UInt64, size: Int64, modified: Double)?

    package init(path: String, compressed: Bool, confinement: PathConfinement?) {
        self.path = path
        self.compressed = compressed
        self.confinement = confinement
    }

    deinit {
        try? handle?.close()
    }

    /// The position `next` with the feed's fingerprint; `heldHash` gives the hash of the given
    /// number of bytes before it from the reader's memory (nil when it does not hold them).
    /// Nil when the file cannot be read (the checkpoint then saves no position).
    package func position(at next: FeedOffset, rejectedBytes: Int64, heldHash: (Int) -> UInt64?) -> FeedPosition? {
        if handle == nil { handle = try? PathConfinement.openForReading(path, within: confinement) }
        guard let descriptor = handle?.fileDescriptor,
              let (size, modified) = FeedFingerprint.attributes(of: descriptor) else { return nil }
        let window = FeedFingerprint.tailWindow
        if head == nil { head = FeedFingerprint.hash(descriptor, from: 0, count: min(FeedFingerprint.headWindow, size)) }
        let tail: UInt64
        if compressed {
            if let known = compressedTail, known.size == size, known.modified == modified {
                tail = known.hash
            } else {
                tail = FeedFingerprint.hash(descriptor, from: max(0, size - window), count: min(window, size))
                compressedTail = (tail, size, modified)
            }
        } else {
            tail = heldHash(Int(window))
                ?? FeedFingerprint.hash(descriptor, from: max(0, next.offset - window), count: min(window, next.offset))
        }
        return FeedPosition(offset: next.offset, line: next.line, rejectedBytes: rejectedBytes, feedSize: size,
                            feedModified: modified, headHash: head!, tailHash: tail, tailWindow: window)
    }
}
