/// A position in a feed file after a committed batch, with what identifies the feed as it was
/// then: its size, modification time, and hashes of its first 64 KB and of the 64 KB that end
/// at `offset` (the part read is not read again to resume: the windows stand for it).
package struct FeedPosition: Sendable, Hashable, Codable {
    /// The byte offset where the next record starts.
    package var offset: Int64
    /// The line number of that record.
    package var line: Int
    /// The size of the rejected-rows file at that point (`bad_rows: skip`), so a resumed step
    /// writes no rejected row twice.
    package var rejectedBytes: Int64
    package var feedSize: Int64
    package var feedModified: Double
    package var headHash: UInt64
    package var tailHash: UInt64
    /// The bytes `tailHash` covers (`FeedFingerprint.tailWindow`); nil in checkpoints written
    /// before it was recorded, which covered 64 KB.
    package var tailWindow: Int64?
    /// A remote feed's identity (`ETag` and length, or `Last-Modified`) in place of the file's
    /// size, time and hashes (section 14).
    package var remote: RemoteIdentity?

    package init(offset: Int64, line: Int, rejectedBytes: Int64, feedSize: Int64, feedModified: Double,
                headHash: UInt64, tailHash: UInt64, tailWindow: Int64? = nil, remote: RemoteIdentity? = nil) {
        self.offset = offset
        self.line = line
        self.rejectedBytes = rejectedBytes
        self.feedSize = feedSize
        self.feedModified = feedModified
        self.headHash = headHash
        self.tailHash = tailHash
        self.tailWindow = tailWindow
        self.remote = remote
    }
}
