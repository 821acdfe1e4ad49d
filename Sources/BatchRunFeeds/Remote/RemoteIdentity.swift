/// What identifies a remote object as it was read (section 14): its `ETag` with its length,
/// or, without an ETag, its `Last-Modified` with its length. A resumed run, and each retry of a
/// broken transfer, compares it with the object's now.
package struct RemoteIdentity: Sendable, Hashable, Codable, CustomStringConvertible {
    package var etag: String?
    package var lastModified: String?
    /// The whole object's length (from `Content-Range` on a 206, else `Content-Length`).
    package var length: Int64?

    package init(etag: String?, lastModified: String?, length: Int64?) {
        self.etag = etag
        self.lastModified = lastModified
        self.length = length
    }

    /// From a response's status and headers (names case-insensitive).
    package init(status: Int, headers: [(name: String, value: String)]) {
        func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name }?.value
        }
        etag = header("etag")
        lastModified = etag == nil ? header("last-modified") : nil
        if status == 206, let range = header("content-range"), let slash = range.lastIndex(of: "/") {
            length = Int64(range[range.index(after: slash)...].trimmingCharacters(in: .whitespaces))
        } else {
            length = header("content-length").flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) }
        }
    }

    /// What a request sends as `If-Range`: the ETag when strong, else the Last-Modified date.
    package var ifRange: String? {
        if let etag { return etag.hasPrefix("W/") ? nil : etag }
        return lastModified
    }

    /// True when both are of one object: their ETags match (else their Last-Modified dates),
    /// and their lengths where both say.
    package func isSame(as other: RemoteIdentity) -> Bool {
        if let x = length, let y = other.length, x != y { return false }
        if etag != nil || other.etag != nil { return etag == other.etag }
        return lastModified == other.lastModified
    }

    /// True when the object can be told apart from a changed one (an ETag or a date).
    package var isVerifiable: Bool { etag != nil || lastModified != nil }

    /// `ETag "abc", 1234 bytes`: what a checkpoint keeps and messages show.
    package var description: String {
        let tag = etag.map { "ETag \($0)" } ?? lastModified.map { "Last-Modified \($0)" } ?? "no ETag or Last-Modified"
        return tag + (length.map { ", \($0) bytes" } ?? "")
    }
}
