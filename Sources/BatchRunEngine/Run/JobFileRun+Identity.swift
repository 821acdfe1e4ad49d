import BatchRunContext
import Foundation

extension JobFileRun {
    /// The runs of `file` recorded in `store`, newest first (`batchrun runs`).
    ///
    /// ```swift
    /// for run in try JobFileRun.history(of: file, in: store, limit: 10) { print(run.id, run.status) }
    /// ```
    package static func history(of file: JobFile, in store: Store, limit: Int = 20) throws -> [RunSummary] {
        try RunLedger(store: store).history(file: identity(of: file), limit: limit)
    }

    /// The runs of the job file at `path` (relative to the current folder), or of the queue
    /// item a report names (`postgresql://HOST:PORT/DB#ID`), recorded in `store`.
    package static func history(ofFileAt path: String, in store: Store, limit: Int = 20) throws -> [RunSummary] {
        let identity = path.contains("://") ? path : URL(fileURLWithPath: path).standardizedFileURL.path
        return try RunLedger(store: store).history(file: identity, limit: limit)
    }

    /// The runs before run `id` (the trends of an HTML report), from the summaries of a history.
    package static func earlierRuns(than id: Int64?, in summaries: [RunSummary]) -> RunHistory {
        RunHistory(summaries.filter { id == nil || $0.id < id! })
    }

    /// The job file as the run history knows it: its absolute, standardized path (or its
    /// `runIdentity`, a queue item's).
    package static func identity(of file: JobFile) -> String {
        file.runIdentity ?? URL(fileURLWithPath: file.path).standardizedFileURL.path
    }

    /// A hash of the job file's text, recorded with each run.
    static func contentHash(of file: JobFile) -> String {
        hexHash(file.source)
    }

    /// A hash of a job's part of the file: the lines from its name to the next job's (or to the
    /// end of `jobs:`). A resumed run starts a job over when this changed.
    package static func definition(of job: Job, in file: JobFile) -> String {
        let lines = file.source.split(separator: "\n", omittingEmptySubsequences: false)
        let start = job.location.line - 1
        let later = file.jobs.map(\.location.line).filter { $0 > job.location.line }.min()
        var end = (later ?? lines.count + 1) - 1
        if later == nil {
            // The last job ends where the next top-level key starts.
            end = lines.indices.first { $0 > start && !(lines[$0].first?.isWhitespace ?? true) && lines[$0].first != "#" } ?? lines.count
        }
        guard start >= 0, start < end, end <= lines.count else { return hexHash(file.source) }
        return hexHash(lines[start..<end].joined(separator: "\n"))
    }

    /// FNV-1a, 64 bits, as hex: stable across processes (Swift's own hashing is not).
    static func hexHash(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return String(hash, radix: 16)
    }
}
