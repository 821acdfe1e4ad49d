import Foundation

/// `FEED.rejected.csv`: each row rejected under `bad_rows: skip`, with its line and reason.
/// Rows are written to `FEED.rejected.csv.partial` as they are rejected, which becomes
/// `FEED.rejected.csv` when the feed was read to its end. The partial file outlives a run that
/// stopped: a resumed import cuts it back to the size its checkpoint names and appends to it.
struct RejectedRows {
    let path: String
    let partialPath: String
    private let handle: FileHandle
    private var wroteHeader: Bool
    /// The partial file's size: what a checkpoint after the rows rejected so far records.
    private(set) var bytes: Int64

    static func path(forFeed feed: String) -> String {
        let url = URL(fileURLWithPath: feed)
        return url.deletingPathExtension().path + ".rejected.csv"
    }

    /// `resumingAt`: the size the partial file had at the checkpoint a resumed import continues
    /// after (0 starts it afresh).
    init(feedPath: String, resumingAt size: Int64 = 0) throws {
        path = Self.path(forFeed: feedPath)
        partialPath = path + ".partial"
        let manager = FileManager.default
        if size > 0, !manager.fileExists(atPath: partialPath), manager.fileExists(atPath: path) {
            try manager.moveItem(atPath: path, toPath: partialPath)   // the stopped run had read its feed to the end
        }
        if size == 0 || !manager.fileExists(atPath: partialPath) {
            guard size == 0 else {
                throw FileAccessError(.read, path: partialPath, reason: "the rows the interrupted run rejected are gone; run without --resume")
            }
            guard manager.createFile(atPath: partialPath, contents: nil) else {
                throw FileAccessError(.write, path: partialPath, errno: errno)
            }
        }
        guard let handle = FileHandle(forWritingAtPath: partialPath) else {
            throw FileAccessError(.write, path: partialPath, errno: errno)
        }
        try handle.truncate(atOffset: UInt64(size))
        try handle.seekToEnd()
        self.handle = handle
        bytes = size
        wroteHeader = size > 0
    }

    mutating func append(line: Int, fields: [String], values: [String], reason: String) throws {
        var text = ""
        if !wroteHeader {
            text += (["line", "reason"] + fields).map(FileOutput.csvField).joined(separator: ",") + "\n"
            wroteHeader = true
        }
        text += ([String(line), reason] + values).map(FileOutput.csvField).joined(separator: ",") + "\n"
        let data = Data(text.utf8)
        try handle.write(contentsOf: data)
        bytes += Int64(data.count)
    }

    /// The feed was read to its end: the partial file becomes `FEED.rejected.csv`.
    func finish() throws {
        try handle.close()
        if FileManager.default.fileExists(atPath: path) { try FileManager.default.removeItem(atPath: path) }
        try FileManager.default.moveItem(atPath: partialPath, toPath: path)
    }

    /// The import stopped: the partial file stays for a resumed run to continue.
    func abandon() {
        try? handle.close()
    }
}
