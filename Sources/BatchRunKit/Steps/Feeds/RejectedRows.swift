import Foundation

/// `FEED.rejected.csv`: each row rejected under `bad_rows: skip`, with its line and reason.
struct RejectedRows {
    let path: String
    let temporaryPath: String
    let handle: FileHandle
    var wroteHeader = false

    static func path(forFeed feed: String) -> String {
        let url = URL(fileURLWithPath: feed)
        return url.deletingPathExtension().path + ".rejected.csv"
    }

    init(feedPath: String) throws {
        path = Self.path(forFeed: feedPath)
        temporaryPath = path + ".partial-\(ProcessInfo.processInfo.processIdentifier)"
        guard FileManager.default.createFile(atPath: temporaryPath, contents: nil),
              let handle = FileHandle(forWritingAtPath: temporaryPath) else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path])
        }
        self.handle = handle
    }

    mutating func append(line: Int, fields: [String], values: [String], reason: String) throws {
        var text = ""
        if !wroteHeader {
            text += (["line", "reason"] + fields).map(FileOutput.csvField).joined(separator: ",") + "\n"
            wroteHeader = true
        }
        text += ([String(line), reason] + values).map(FileOutput.csvField).joined(separator: ",") + "\n"
        try handle.write(contentsOf: Data(text.utf8))
    }

    func finish() throws {
        try handle.close()
        if FileManager.default.fileExists(atPath: path) { try FileManager.default.removeItem(atPath: path) }
        try FileManager.default.moveItem(atPath: temporaryPath, toPath: path)
    }

    func abandon() {
        try? handle.close()
        try? FileManager.default.removeItem(atPath: temporaryPath)
    }
}
