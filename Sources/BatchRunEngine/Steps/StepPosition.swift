import BatchRunFeeds
import BatchRunStore

/// Where a step's committed work ends: saved as its checkpoint in the transaction of every
/// batch, and where a resumed step starts again.
package enum StepPosition: Sendable, Hashable, Codable {
    /// An insert from a feed file: where the next batch starts, and the feed as it was read.
    case feed(FeedPosition)
    /// An insert from a feed in parts: the parts done, and where each part begun goes on.
    case parts(PartsProgress)
    /// An insert of inline rows: how many rows are done.
    case rows(Int)
    /// A batch-update or a delete: the primary key of the last row done, in key order.
    case key([StoreValue])
    /// A step that is all or nothing (a hot swap) and committed.
    case done
}

