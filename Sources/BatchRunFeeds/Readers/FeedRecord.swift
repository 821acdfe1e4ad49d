import BatchRunStore

/// One record of a feed: where it started and its values by field name.
package struct FeedRecord: Sendable {
    /// 1-based line where the record starts (for JSON arrays, the line of its opening brace).
    package var line: Int
    /// Field names; for CSV and TSV the header, shared by every record.
    package var fields: [String]
    /// Values aligned with `fields`: text for CSV and TSV, typed for JSON.
    package var values: [StoreValue]

    package init(line: Int, fields: [String], values: [StoreValue]) {
        self.line = line
        self.fields = fields
        self.values = values
    }
}

/// A malformed feed: `data/sessions.csv:1234: unterminated quoted field`.
package struct FeedError: BatchRunError {
    package var file: String
    package var line: Int
    package var message: String

    package var code: String { "feed.malformed" }
    /// The record's line, column 1.
    package var location: SourceLocation? { SourceLocation(file: file, line: line, column: 1) }
    package var description: String { "\(file):\(line): \(message)" }
}

/// Reads a feed one record at a time.
package protocol FeedReader {
    mutating func next() throws(FeedError) -> FeedRecord?
    /// Where the next record starts: a reader opened `startingAt` it reads on from there.
    var nextRecord: FeedOffset { get }
    /// `FeedFingerprint.hash` of the `count` bytes (fewer at the feed's start) that end where
    /// the next record starts, from the bytes the reader holds: nil when it does not hold them
    /// all (just after it went on from a resume point).
    func hashOfBytes(beforeNextRecord count: Int) -> UInt64?
}

/// A place between two records of a feed file: the byte offset and the line the next record
/// starts at. A resumed import opens its feed here instead of reading the part done again.
package struct FeedOffset: Sendable, Hashable {
    package var offset: Int64
    package var line: Int

    package init(offset: Int64, line: Int) {
        self.offset = offset
        self.line = line
    }
}

/// Opens the right reader for a feed file.
///
/// ```swift
/// var reader = try FeedReaders.open(path: "data/readings.ndjson", format: .ndjson, displayPath: "readings.ndjson")
/// while let record = try reader.next() { print(record.line, record.values) }
/// ```
package enum FeedReaders {
    /// `startingAt`: a place a reader of the same file gave as `nextRecord` (a CSV or TSV
    /// header is still read from the top); `compression`: how the file is compressed (its
    /// offsets are then in the decompressed bytes).
    package static func open(path: String, format: FeedFormat, displayPath: String, startingAt start: FeedOffset? = nil,
                            compression: FeedCompression = .none, confinement: PathConfinement? = nil,
                            remote: RemoteFeed? = nil, watch: FeedWatch? = nil) throws(FeedError) -> any FeedReader {
        switch format {
        case .csv: return try CSVReader(path: path, delimiter: UInt8(ascii: ","), displayPath: displayPath, startingAt: start,
                                        compression: compression, confinement: confinement, remote: remote, watch: watch)
        case .tsv: return try CSVReader(path: path, delimiter: UInt8(ascii: "\t"), displayPath: displayPath, startingAt: start,
                                        compression: compression, confinement: confinement, remote: remote, watch: watch)
        case .ndjson: return try NDJSONReader(path: path, displayPath: displayPath, startingAt: start, compression: compression,
                                              confinement: confinement, remote: remote, watch: watch)
        case .json: return try JSONArrayReader(path: path, displayPath: displayPath, startingAt: start, compression: compression,
                                               confinement: confinement, remote: remote, watch: watch)
        }
    }
}
