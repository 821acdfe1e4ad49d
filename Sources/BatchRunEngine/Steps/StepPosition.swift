import BatchRunFeeds
import BatchRunStore

/// Where a step's committed work ends: saved as its checkpoint in the transaction of every
/// batch, and where a resumed step starts again.
package enum StepPosition: Sendable, Hashable, Codable {
    /// An insert from a feed file: where the next batch starts, and the feed as it was read.
    case feed(FeedPosition)
    /// An insert from a feed in parts: the part, and where the next batch starts in it.
    case part(PartPosition)
    /// An insert of inline rows: how many rows are done.
    case rows(Int)
    /// A batch-update or a delete: the primary key of the last row done, in key order.
    case key([StoreValue])
    /// A step that is all or nothing (a hot swap) and committed.
    case done
}

/// Where an insert from a feed in parts (section 17) goes on: a part of the run's recorded list
/// (`_batchrun_parts`) and the position in it; with the bytes of the parts before it and of
/// all, for the live page's progress.
package struct PartPosition: Sendable, Hashable, Codable {
    /// The part's place in the run's list, from 0.
    package var part: Int
    package var feed: FeedPosition
    package var bytesBefore: Int64
    package var bytesTotal: Int64

    package init(part: Int, feed: FeedPosition, bytesBefore: Int64, bytesTotal: Int64) {
        self.part = part
        self.feed = feed
        self.bytesBefore = bytesBefore
        self.bytesTotal = bytesTotal
    }
}
