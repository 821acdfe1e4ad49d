import BatchRunFeeds

/// Where an insert from a feed in parts (section 17) stands, saved as its checkpoint with every
/// batch: the parts of the run's recorded list (`_batchrun_parts`) that are done, and the
/// position each part begun goes on from. With `parallel: N` up to N parts are begun at once,
/// and they end in any order.
///
/// ```swift
/// var progress = PartsProgress(bytesTotal: 4_096)
/// progress.move(part: 0, to: position)     // a batch of part 0 committed
/// progress.finish(part: 0, size: 1_024)    // its last one
/// progress.isDone(0)                       // true
/// ```
package struct PartsProgress: Sendable, Hashable, Codable {
    /// A part begun and not done, and where its next batch starts.
    package struct OpenPart: Sendable, Hashable, Codable {
        package var part: Int
        package var feed: FeedPosition
    }

    /// Every part before this one is done.
    package private(set) var doneBelow = 0
    /// Parts after `doneBelow` that are done too (ended before an earlier one), in order.
    package private(set) var doneAbove: [Int] = []
    /// In part order.
    package private(set) var open: [OpenPart] = []
    /// Bytes of the parts done, and of all parts (the live page's progress).
    package private(set) var bytesDone: Int64 = 0
    package let bytesTotal: Int64

    package init(bytesTotal: Int64) {
        self.bytesTotal = bytesTotal
    }

    package func isDone(_ part: Int) -> Bool {
        part < doneBelow || doneAbove.contains(part)
    }

    /// Where `part` goes on, when it was begun and is not done.
    package func position(of part: Int) -> FeedPosition? {
        open.first { $0.part == part }?.feed
    }

    /// Bytes read so far: the parts done and the open parts' positions.
    package var bytesRead: Int64 {
        bytesDone + open.reduce(0) { $0 + $1.feed.offset }
    }

    /// A batch of `part` committed; the part goes on from `feed`.
    package mutating func move(part: Int, to feed: FeedPosition) {
        if let index = open.firstIndex(where: { $0.part == part }) {
            open[index].feed = feed
        } else {
            open.append(OpenPart(part: part, feed: feed))
            open.sort { $0.part < $1.part }
        }
    }

    /// `part` (of `size` bytes) was read to its end and every batch of it committed.
    package mutating func finish(part: Int, size: Int64) {
        guard !isDone(part) else { return }
        open.removeAll { $0.part == part }
        bytesDone += size
        doneAbove.append(part)
        doneAbove.sort()
        while doneAbove.first == doneBelow {
            doneAbove.removeFirst()
            doneBelow += 1
        }
    }
}
