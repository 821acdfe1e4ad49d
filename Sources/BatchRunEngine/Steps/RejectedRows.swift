import BatchRunStore
import BatchRunFeeds
import Foundation

/// `FEED.rejected.csv`: each row rejected under `bad_rows: skip`, with its line and reason.
/// Rows are written to `FEED.rejected.csv.partial` as they are rejected, which becomes
/// `FEED.rejected.csv` when the feed was read to its end. The partial file outlives a run that
/// stopped: a resumed import cuts it back to the size its checkpoint names and appends to it.
struct RejectedRows {
    package let path: String
    /// The feed's folder, opened once: the files are made, renamed and removed in it by name.
    private let folder: ConfinedFolder
    private let name: String
    private let partialName: String
    private let handle: FileHandle
    private var wroteHeader: Bool
    /// The partial file's size: what a checkpoint after the rows rejected so far records.
    package private(set) var bytes: Int64

    /// `data/f.csv` and `data/f.csv.gz` give `data/f.rejected.csv` (uncompressed).
    package static func path(forFeed feed: String) -> String {
        let url = URL(fileURLWithPath: FeedCompression.strip(feed))
        return url.deletingPathExtension().path + ".rejected.csv"
    }

    /// `resumingAt`: the size the partial file had at the checkpoint a resumed import continues
    /// after (0 starts it afresh). `confinement`: the folders a queue worker lets the item write in.
    package init(feedPath: String, resumingAt size: Int64 = 0, confinement: PathConfinement? = nil) throws {
        path = Self.path(forFeed: feedPath)
        folder = try ConfinedFolder.holding(path, within: confinement, creating: false)
        name = folder.name
        partialName = name + ".partial"
        let partialPath = path + ".partial"
        if size > 0, !folder.contains(partialName), folder.contains(name) {
            try folder.rename(name, to: partialName)   // the stopped run had read its feed to the end
        }
        if size > 0 && !folder.contains(partialName) {
            throw FileAccessError(.read, path: partialPath, reason: "the rows the interrupted run rejected are gone; run without --resume")
        }
        let handle = try folder.openForWriting(partialName, truncating: false)
        try handle.truncate(atOffset: UInt64(size))
        try handle.seekToEnd()
        self.handle = handle
        bytes = size
        wroteHeader = size > 0
    }

    /// Removes a rejected file (and its partial file) an earlier run of the feed left.
    static func removeStale(forFeed feed: String, confinement: PathConfinement?) {
        guard let folder = try? ConfinedFolder.holding(path(forFeed: feed), within: confinement, creating: false) else { return }
        folder.remove(folder.name)
        folder.remove(folder.name + ".partial")
    }

    package mutating func append(line: Int, fields: [String], values: [String], reason: String) throws {
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
    package func finish() throws {
        try handle.close()
        try folder.rename(partialName, to: name)
    }

    /// The import stopped: the partial file stays for a resumed run to continue.
    package func abandon() {
        try? handle.close()
    }
}
