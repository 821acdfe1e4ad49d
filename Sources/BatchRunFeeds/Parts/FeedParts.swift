import BatchRunStore
import Foundation

/// Lists a glob's parts (section 17) with what a resumed run compares: a file's size and
/// modification time, an S3 object's size and ETag. The list is in name order, byte by byte.
///
/// ```swift
/// let parts = try FeedParts.local(FeedGlob("/srv/nightly/data/part-*.csv")!, confinement: nil)
/// let now = FeedParts.localPart(parts[0].name, confinement: nil)
/// parts[0].changes(now: now)      // nil: unchanged
/// ```
package enum FeedParts {
    /// The files an absolute `glob` names, each within `confinement` (a part that resolves
    /// outside it is an error, not skipped). Throws `FeedGlobError.noMatch` when there is none.
    package static func local(_ glob: FeedGlob, confinement: PathConfinement?) throws -> [FeedPart] {
        let root = glob.walkRoot(relativeTo: nil)
        if let violation = confinement?.violation(of: root) { throw violation }
        // A folder before the first wildcard that is not there: nothing matches (relative
        // paths of a queue folder's item resolve against the queue, where `data/` may not be).
        var status = stat()
        if stat(root.count > 1 && root.hasSuffix("/") ? String(root.dropLast()) : root, &status) != 0 {
            // Not there (or a file on the way): nothing matches. Not readable: an error that says so.
            guard errno == ENOENT || errno == ENOTDIR else {
                throw FeedGlobError.unreadable(path: root, reason: String(cString: strerror(errno)))
            }
            throw FeedGlobError.noMatch(pattern: glob.pattern, lookedIn: "\(root), which does not exist")
        } else if status.st_mode & S_IFMT != S_IFDIR {
            throw FeedGlobError.noMatch(pattern: glob.pattern, lookedIn: "\(root), which is not a folder")
        }
        let names: [String]
        do {
            // A part's rejected rows (`PART.rejected.csv`, and `.partial` while written) are
            // batchrun's own output beside it, never a part of the next run.
            names = try glob.localParts(relativeTo: nil).filter { !$0.hasSuffix(".rejected.csv") && !$0.hasSuffix(".rejected.csv.partial") }
        } catch let error as FeedGlobError {
            throw error
        } catch {
            throw FeedGlobError.unreadable(path: root, reason: (error as NSError).localizedDescription)
        }
        guard !names.isEmpty else { throw FeedGlobError.noMatch(pattern: glob.pattern, lookedIn: root) }
        return try names.map { name in
            if let violation = confinement?.violation(of: name) { throw violation }
            guard let part = localPart(name, confinement: confinement) else {
                throw FeedGlobError.unreadable(path: name, reason: "it cannot be opened and looked at")
            }
            return part
        }
    }

    /// The parts of `pattern` now: files on this machine (within `confinement`), or the objects
    /// of an S3 listing when `remote` is an `s3://` feed. Throws `FeedError` naming the pattern,
    /// also when nothing matches.
    package static func list(pattern: String, remote: RemoteFeed?, confinement: PathConfinement?,
                             watch: FeedWatch? = nil) throws(FeedError) -> [FeedPart] {
        let shown = remote.map { RemoteFeed.redacted($0.url) } ?? pattern
        do {
            if let remote {
                #if NetworkFeeds
                guard case .s3(let location) = remote.location, let glob = FeedGlob(location.key) else {
                    throw FeedError(file: shown, line: 0, message: "only s3:// feeds can be given as a glob")
                }
                let parts = try S3Listing.parts(of: remote, glob: glob, watch: watch)
                guard !parts.isEmpty else { throw FeedGlobError.noMatch(pattern: shown, lookedIn: "s3://\(location.bucket)/\(glob.literalPrefix)") }
                return parts
                #else
                throw FeedError(file: shown, line: 0, message: RemoteFeed.notBuilt)
                #endif
            }
            guard let glob = FeedGlob(pattern) else { throw FeedError(file: shown, line: 0, message: "not a glob") }
            return try local(glob, confinement: confinement)
        } catch let error as FeedError {
            throw error
        } catch {
            throw FeedError(file: shown, line: 0, message: "\(error)")
        }
    }

    /// The first part of `recorded` that is no longer as recorded (gone, another size, ETag or
    /// modification time), with what changed; nil when none did. Local parts are looked at one
    /// by one; S3 parts through one listing.
    package static func firstChange(in recorded: [FeedPart], pattern: String, remote: RemoteFeed?,
                                    confinement: PathConfinement?) throws(FeedError) -> (part: FeedPart, change: String)? {
        if remote != nil {
            let now = Dictionary(try list(pattern: pattern, remote: remote, confinement: confinement).map { ($0.name, $0) }) { first, _ in first }
            for part in recorded { if let change = part.changes(now: now[part.name]) { return (part, change) } }
            return nil
        }
        for part in recorded {
            if let change = part.changes(now: localPart(part.name, confinement: confinement)) { return (part, change) }
        }
        return nil
    }

    /// A file part as it is now (opened as its reader opens it); nil when it cannot be opened.
    package static func localPart(_ path: String, confinement: PathConfinement?) -> FeedPart? {
        guard let handle = try? PathConfinement.openForReading(path, within: confinement) else { return nil }
        defer { try? handle.close() }
        guard let (size, modified) = FeedFingerprint.attributes(of: handle.fileDescriptor) else { return nil }
        return FeedPart(name: path, size: size, modified: modified)
    }
}
