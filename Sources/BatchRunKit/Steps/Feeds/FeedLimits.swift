/// Bounds on one feed record, so a hostile or broken feed (a quote never closed, a file with
/// no line breaks) is an error naming the file and line instead of unbounded memory.
///
/// A record is one CSV/TSV row (quoted newlines included), one NDJSON line or one element of
/// a JSON array. Real rows are well under a kilobyte; the bounds leave room for long text
/// while keeping one record's memory small next to a batch.
enum FeedLimits {
    /// One field's value: 1 MiB.
    static let maxFieldBytes = 1 << 20
    /// One record: 4 MiB.
    static let maxRecordBytes = 4 << 20

    static func fieldTooLong(_ field: String, file: String, line: Int) -> FeedError {
        FeedError(file: file, line: line, message: "field \(field) is longer than 1 MiB, the limit for one feed field")
    }

    static func recordTooLong(file: String, line: Int) -> FeedError {
        FeedError(file: file, line: line, message: "the record starting on this line is longer than 4 MiB, the limit for one feed record")
    }
}
