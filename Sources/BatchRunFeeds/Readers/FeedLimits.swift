import Foundation

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

    /// The file is shorter than when it was opened: another program truncated it mid-read.
    package static func truncated(file: String, line: Int, opened: UInt64, read: UInt64) -> FeedError {
        FeedError(file: file, line: line,
                  message: "the feed was truncated while being read (\(opened) bytes when opened, it ended after \(read))")
    }

    /// The size of an open file, or 0 when it has none (a pipe).
    package static func size(of handle: FileHandle) -> UInt64 {
        var info = stat()
        guard fstat(handle.fileDescriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return 0 }
        return UInt64(info.st_size)
    }
}
