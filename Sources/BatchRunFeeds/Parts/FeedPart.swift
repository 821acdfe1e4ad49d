import Foundation

/// One part of a feed given as a glob (section 17): a file on this machine or an S3 object, as
/// it was when a run listed it. A run records its parts once; a resumed run refuses a part that
/// is no longer what was recorded (`changes(now:)`), as it refuses a changed single feed.
///
/// ```swift
/// let parts = try FeedParts.local(FeedGlob("/srv/nightly/data/part-*.csv.gz")!, confinement: nil)
/// parts[0].name       // "/srv/nightly/data/part-000.csv.gz"
/// parts[0].size       // 1_048_576
/// ```
package struct FeedPart: Sendable, Hashable, Codable {
    /// The file's path, or the object's `s3://BUCKET/KEY`.
    package var name: String
    /// Bytes, as listed (compressed, for a compressed part).
    package var size: Int64
    /// A file's modification time (seconds since 1970); 0 for an S3 object.
    package var modified: Double
    /// An S3 object's ETag as listed; nil for a file.
    package var etag: String?

    package init(name: String, size: Int64, modified: Double = 0, etag: String? = nil) {
        self.name = name
        self.size = size
        self.modified = modified
        self.etag = etag
    }

    /// How `now` differs from this part as recorded, for a message; nil when it is the same.
    package func changes(now: FeedPart?) -> String? {
        guard let now else { return "it is gone" }
        if now.size != size { return "its size was \(size) bytes, it is \(now.size) now" }
        if let etag, now.etag != etag { return "its ETag was \(etag), it is \(now.etag ?? "none") now" }
        // Within a microsecond, as `FeedFingerprint` compares times.
        if abs(now.modified - modified) >= 1e-6 { return "it was modified since" }
        return nil
    }
}
