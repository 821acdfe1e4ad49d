/// One record of a feed: where it started and its values by field name.
public struct FeedRecord: Sendable {
    /// 1-based line where the record starts (for JSON arrays, the line of its opening brace).
    public var line: Int
    /// Field names; for CSV and TSV the header, shared by every record.
    public var fields: [String]
    /// Values aligned with `fields`: text for CSV and TSV, typed for JSON.
    public var values: [StoreValue]
}

/// A malformed feed: `data/sessions.csv:1234: unterminated quoted field`.
public struct FeedError: Error, Sendable, CustomStringConvertible {
    public var file: String
    public var line: Int
    public var message: String

    public var description: String { "\(file):\(line): \(message)" }
}

/// Reads a feed one record at a time.
public protocol FeedReader {
    mutating func next() throws(FeedError) -> FeedRecord?
}

/// Opens the right reader for a feed file.
public enum FeedReaders {
    public static func open(path: String, format: FeedFormat, displayPath: String) throws(FeedError) -> any FeedReader {
        switch format {
        case .csv: return try CSVReader(path: path, delimiter: UInt8(ascii: ","), displayPath: displayPath)
        case .tsv: return try CSVReader(path: path, delimiter: UInt8(ascii: "\t"), displayPath: displayPath)
        case .ndjson: return try NDJSONReader(path: path, displayPath: displayPath)
        case .json: return try JSONArrayReader(path: path, displayPath: displayPath)
        }
    }
}
