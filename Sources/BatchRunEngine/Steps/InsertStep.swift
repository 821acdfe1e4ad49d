import BatchRunStore
import BatchRunFeeds
import Foundation

/// `insert`: adds rows from inline `rows` or a feed file, in batches.
package struct InsertStep: Sendable, Hashable {
    package enum Source: Sendable, Hashable {
        /// Inline rows: field name to value, in the order written.
        case rows([[(field: String, value: StoreValue)]])
        case file(path: String, format: FeedFormat)
        /// A glob (section 17): the parts it lists, read in name order as one feed. `pattern`:
        /// an absolute path pattern or an `s3://` one; `compression`: nil when each part's
        /// name says it.
        case parts(pattern: String, format: FeedFormat, compression: FeedCompression?)

        package static func == (lhs: Source, rhs: Source) -> Bool {
            switch (lhs, rhs) {
            case (.file(let a, let b), .file(let c, let d)): return a == c && b == d
            case (.parts(let a, let b, let c), .parts(let d, let e, let f)): return a == d && b == e && c == f
            case (.rows(let a), .rows(let b)):
                return a.count == b.count && zip(a, b).allSatisfy { x, y in
                    x.count == y.count && zip(x, y).allSatisfy { $0.field == $1.field && $0.value == $1.value }
                }
            default: return false
            }
        }

        package func hash(into hasher: inout Hasher) {
            switch self {
            case .file(let path, let format): hasher.combine(path); hasher.combine(format)
            case .parts(let pattern, let format, _): hasher.combine(pattern); hasher.combine(format)
            case .rows(let rows): hasher.combine(rows.count)
            }
        }
    }

    package enum BadRows: String, Sendable, Hashable, CaseIterable {
        case fail, skip
    }

    package var entity: String
    package var source: Source
    /// Feed values read as NULL; nil means the default (`[""]` for CSV and TSV).
    package var nulls: [String]?
    /// Feed field to column, or to nil to drop the field.
    package var columns: [String: String?] = [:]
    package var badRows: BadRows = .fail
    package var replace = false
    package var params: [String: ParamTemplate] = [:]
    package var batchSize: Int?
    /// How the feed file is compressed (from its suffix or `compression:`).
    package var compression: FeedCompression = .none
    /// The folders a queue worker lets the item read its feed from and write its rejected rows
    /// in (nil: anywhere).
    package var confinement: PathConfinement?
    /// `parallel:` (1 to 64; nil: not given): how many parts of a feed in parts are read at
    /// once (`readers`), and over how many sessions batches are written at once where the store
    /// has import lanes (`writers`, PostgreSQL).
    package var parallel: Int?
    /// Parts read at once: `parallel:`, else one.
    package var readers: Int { parallel ?? 1 }
    /// Batches written at once (PostgreSQL): `parallel:`, else `defaultWriters`.
    package var writers: Int { parallel ?? Self.defaultWriters }

    /// Sessions an import writes over when `parallel:` is not given: 3, measured best on 2
    /// cores with the server on them (docs/benchmarks.md: 0.85x psql's time, 2 sessions 0.89x);
    /// as many as the cores on 4 or more, up to 4.
    package static let defaultWriters = min(4, max(3, ProcessInfo.processInfo.activeProcessorCount))
    /// A fan-out part's item (JOBFILE.md 17): the parts it reads, its one part, instead of
    /// what the glob lists when the run starts.
    package var listedParts: [FeedPart]?
    /// An `http(s)://` feed's URL, headers, CA file and timeouts (then `source`'s path is the URL).
    package var remote: RemoteFeed?

    package init(entity: String, source: Source) {
        self.entity = entity
        self.source = source
    }

    /// True for inline `rows`.
    package var isInline: Bool {
        if case .rows = source { return true }
        return false
    }

    /// The step as it reads one of its parts: that file (or object) alone, compressed as its
    /// name says unless `compression:` said otherwise.
    package func reading(part: FeedPart) -> InsertStep {
        let name = part.name
        guard case .parts(_, let format, let compression) = source else { return self }
        var step = self
        step.source = .file(path: name, format: format)
        step.compression = compression ?? FeedCompression(path: name)
        if var feed = remote {
            // The object as listed: a GET that finds another is refused.
            feed.url = name
            feed.expected = RemoteIdentity(etag: part.etag, lastModified: nil, length: part.size)
            // Named after the whole key (its slashes as `_`): parts of the same name in two folders
            // must not share a rejected-rows file.
            let folder = feed.rejectedBase.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
            let key = S3Location(url: FeedCompression.strip(name))?.key ?? FeedCompression.strip(name)
            feed.rejectedBase = folder + "/" + key.replacingOccurrences(of: "/", with: "_")
            step.remote = feed
        }
        return step
    }

    /// The column a feed field goes to (nil: dropped), following `columns`.
    package func column(forField field: String) -> String?? {
        if let mapped = columns[field] { return .some(mapped) }
        return .some(field)
    }
}
