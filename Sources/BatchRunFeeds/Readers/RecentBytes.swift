/// The bytes a feed reader consumed just before the first byte of its buffer, up to
/// `capacity`, kept when the buffer is refilled; with the buffer they give the fingerprint's
/// window before a batch's end without reading the feed again (`FeedFingerprint`).
///
/// ```swift
/// recent.keep(buffer[0..<start])      // before the consumed bytes are dropped from the buffer
/// let tail = recent.hash(of: 4096, endingAt: start, in: buffer, bufferOffset: offsetOfBuffer)
/// ```
struct RecentBytes {
    package let capacity: Int
    /// The last bytes before the buffer's first byte, oldest first.
    private var kept: [UInt8] = []

    package init(capacity: Int = Int(FeedFingerprint.tailWindow)) {
        self.capacity = capacity
        kept.reserveCapacity(capacity)
    }

    /// Keeps the end of `dropped`, the bytes leaving the front of the buffer (which follow the kept ones).
    package mutating func keep(_ dropped: UnsafeBufferPointer<UInt8>) {
        if dropped.count >= capacity {
            kept.removeAll(keepingCapacity: true)
            kept.append(contentsOf: UnsafeBufferPointer(rebasing: dropped[(dropped.count - capacity)...]))
            return
        }
        let overflow = kept.count + dropped.count - capacity
        if overflow > 0 { kept.removeFirst(overflow) }
        kept.append(contentsOf: dropped)
    }

    /// Nothing is known before the buffer any more (the reader skipped to another offset).
    package mutating func forget() {
        kept.removeAll(keepingCapacity: true)
    }

    /// `FeedFingerprint.hash` of the `count` bytes (fewer at the feed's start) that end at
    /// `end` in `buffer`, whose first byte is at `bufferOffset` in the feed; nil when some of
    /// them are neither in the buffer nor kept.
    package func hash(of count: Int, endingAt end: Int, in buffer: UnsafeBufferPointer<UInt8>, bufferOffset: Int64) -> UInt64? {
        let wanted = Int(min(Int64(count), bufferOffset + Int64(end)))
        let fromKept = wanted - min(wanted, end)
        guard fromKept <= kept.count else { return nil }
        var hash = FeedFingerprint.emptyHash
        kept.withUnsafeBufferPointer { kept in
            hash = FeedFingerprint.hash(UnsafeBufferPointer(rebasing: kept[(kept.count - fromKept)...]), continuing: hash)
        }
        return FeedFingerprint.hash(UnsafeBufferPointer(rebasing: buffer[(end - (wanted - fromKept))..<end]), continuing: hash)
    }
}
