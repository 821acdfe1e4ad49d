import BatchRunEngine
import BatchRunFeeds
import BatchRunStore
import Foundation

/// Fan-out batches in a queue folder (JOBFILE.md 17). A batch is a folder `batches/ID/`: its
/// record (`batch.json`: the job, and the names of its needs item, its parts' items and its
/// completion item) and `held/`, the items it has not queued yet, written whole at submit.
/// What comes next is queued by renaming it from `held/` into `pending/`: the parts once the
/// needs item is in `done/`, the completion once every part is. A rename happens once, so
/// however many workers see the last part done at the same moment, one of them queues the
/// completion. A worker that died between ending a part and the rename is made up for by the
/// next worker with nothing to claim (`advanceBatches()`).
extension QueueFolder {
    /// What `batches/ID/batch.json` holds.
    struct BatchRecord: Codable {
        var id: Int64
        var job: String
        var needs: String?
        var parts: [String]
        var completion: String?
        /// Set once every item ended done, before `prune` removes any: an item found nowhere
        /// then was pruned, not waiting.
        var finished: Bool?
    }

    /// The line of a batch's item that says what it runs (`QueueBatchMembership` JSON).
    static let batchPrefix = "# batchrun-batch: "

    var batchesFolder: String { path + "/batches" }

    func batchFolder(_ id: Int64) -> String { batchesFolder + "/\(id)" }

    package func submitBatch(fileAt path: String, params: [String: String], submission: QueueSubmission, fanOut: FanOut,
                             parts: [FeedPart]) throws -> QueueBatchSubmitted {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let base = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        let id = try newBatchFolder()
        let folder = batchFolder(id)
        let held = folder + "/held"
        try FileManager.default.createDirectory(atPath: held, withIntermediateDirectories: true)
        let due = submission.dueTime(now: QueueClock.now())
        func write(_ role: FanOutRole, suffix: String) throws -> String {
            let name = QueueFolderName(priority: submission.priority, due: due, number: 1, base: "\(base)-batch\(id)-\(suffix)").text
            let membership = String(decoding: try JSONEncoder.sorted.encode(QueueBatchMembership(batch: id, role: role)), as: UTF8.self)
            let content = Self.batchPrefix + membership + "\n" + (try Self.content(text: text, params: params, submission: submission))
            try Self.writeWhole(content, to: held + "/" + name)
            return name
        }
        let width = max(4, String(parts.count).count)
        var record = BatchRecord(id: id, job: fanOut.job, parts: [])
        if !fanOut.needs.isEmpty { record.needs = try write(.needs(job: fanOut.job), suffix: "needs") }
        for (index, part) in parts.enumerated() {
            let number = String(repeating: "0", count: max(0, width - String(index + 1).count)) + String(index + 1)
            record.parts.append(try write(.part(job: fanOut.job, part: part), suffix: "part\(number)"))
        }
        if !fanOut.completion.isEmpty { record.completion = try write(.completion(job: fanOut.job), suffix: "completion") }
        try Self.writeWhole(String(decoding: try JSONEncoder.sorted.encode(record), as: UTF8.self), to: folder + "/batch.json")
        if let needs = record.needs { release(needs, of: id) } else { advanceBatch(id) }
        return QueueBatchSubmitted(id: id, parts: parts.count)
    }

    /// Makes `batches/ID/` under the next free number; the number.
    private func newBatchFolder() throws -> Int64 {
        try FileManager.default.createDirectory(atPath: batchesFolder, withIntermediateDirectories: true)
        var id = (batchIDs().max() ?? 0) + 1
        while true {
            if mkdir(batchFolder(id), 0o755) == 0 { return id }
            guard errno == EEXIST else { throw FileAccessError(.write, path: batchFolder(id), errno: errno) }
            id += 1
        }
    }

    /// Every batch's number, in order.
    func batchIDs() -> [Int64] {
        ((try? FileManager.default.contentsOfDirectory(atPath: batchesFolder)) ?? []).compactMap { Int64($0) }.sorted()
    }

    /// Writes `content` beside `path` and renames it there: never seen half written.
    static func writeWhole(_ content: String, to path: String) throws {
        let temporary = URL(fileURLWithPath: path).deletingLastPathComponent().path + "/.write-\(UUID().uuidString)"
        try Data(content.utf8).write(to: URL(fileURLWithPath: temporary))
        guard rename(temporary, path) == 0 else {
            let error = FileAccessError(.move, path: temporary, errno: errno)
            unlink(temporary)
            throw error
        }
    }

    /// Marks batch `id` finished in its record (before any of its items is pruned).
    func markFinished(_ id: Int64) throws {
        guard var record = batchRecord(id), record.finished != true else { return }
        record.finished = true
        try Self.writeWhole(String(decoding: try JSONEncoder.sorted.encode(record), as: UTF8.self), to: batchFolder(id) + "/batch.json")
    }

    func batchRecord(_ id: Int64) -> BatchRecord? {
        FileManager.default.contents(atPath: batchFolder(id) + "/batch.json").flatMap { try? JSONDecoder().decode(BatchRecord.self, from: $0) }
    }

    /// Queues a held item of batch `id`: into `pending/`, or `scheduled/` while it is not due.
    /// False when it was not held (queued already, by this worker or another).
    @discardableResult
    private func release(_ name: String, of id: Int64) -> Bool {
        let due = QueueFolderName.due(of: name) ?? .distantPast
        let state: QueueItemState = due > QueueClock.now() ? .scheduled : .pending
        return rename(batchFolder(id) + "/held/" + name, itemPath(name, in: state)) == 0
    }

    /// Queues what batch `id` waits for, when what it waits for is done: its parts once its
    /// needs item is, its completion once every part is. Called after each of its items: what
    /// is still held is read from the folder once, and the parts are looked at last first (the
    /// last to end), so that an item of a batch of 400 parts costs a few system calls, not a
    /// rename tried for every part (160,000 over the batch) and a file looked for per part done.
    func advanceBatch(_ id: Int64) {
        let heldFolder = batchFolder(id) + "/held"
        guard let record = batchRecord(id), FileManager.default.fileExists(atPath: heldFolder) else { return }
        // A folder that cannot be listed (too many open files): every name is tried, as the
        // renames of those not held fail.
        let held = (try? Set(FileManager.default.contentsOfDirectory(atPath: heldFolder)))
            ?? Set(record.parts + [record.completion].compactMap { $0 })
        func isDone(_ name: String) -> Bool { FileManager.default.fileExists(atPath: itemPath(name, in: .done)) }
        let heldParts = record.parts.filter(held.contains)
        if !heldParts.isEmpty, record.needs.map(isDone) ?? true {
            for part in heldParts { release(part, of: id) }
        }
        if let completion = record.completion, held.contains(completion), record.parts.reversed().allSatisfy(isDone) {
            release(completion, of: id)
        }
        // Nothing held any more: its folder goes, so that idle workers no longer look into it.
        _ = rmdir(heldFolder)
    }

    /// Advances every batch that still holds items: what a worker that died between ending an
    /// item and queueing what came next left undone.
    func advanceBatches() {
        for id in batchIDs() {
            // A batch whose items are all queued has no held/ left.
            if FileManager.default.fileExists(atPath: batchFolder(id) + "/held") { advanceBatch(id) }
        }
    }

    /// What a batch's item runs, from its first lines; nil for any other item.
    package static func membership(ofItemAt path: String) -> QueueBatchMembership? {
        guard let line = headerLines(ofItemAt: path).first(where: { $0.hasPrefix(batchPrefix) }) else { return nil }
        return try? JSONDecoder().decode(QueueBatchMembership.self, from: Data(line.dropFirst(batchPrefix.count).utf8))
    }

    /// Each item of a batch is looked for where it is (never by listing a state's folder, which
    /// may hold many finished items): a live page reads this every second. A done part's rows
    /// are read from its report once, then kept.
    package func batches() throws -> [QueueBatch] {
        try batches(only: nil)
    }

    /// Every batch, or the one numbered `only`.
    func batches(only: Int64?) throws -> [QueueBatch] {
        (only.map { [$0] } ?? batchIDs()).compactMap { id in
            guard let record = batchRecord(id) else { return nil }
            var parts: [String: Int] = [:], rows = 0
            for name in record.parts {
                guard let state = batchItemState(name, of: id) ?? (record.finished == true ? .done : nil) else {
                    parts[QueueBatch.waiting, default: 0] += 1
                    continue
                }
                parts[state.rawValue, default: 0] += 1
                if state == .done {
                    rows += doneRows.rows(of: itemPath(name, in: .done) + ".json")
                } else if state == .running, let progress = ItemProgress.read(itemPath(name, in: .running) + ".progress") {
                    rows += progress.rows
                }
            }
            let completion = record.completion.map { name in
                let state = batchItemState(name, of: id) ?? (record.finished == true ? .done : nil)
                return QueueBatch.Completion(id: state == nil ? nil : name, state: state?.rawValue ?? QueueBatch.waiting)
            }
            return QueueBatch(id: id, job: record.job, parts: parts, rows: rows, completion: completion)
        }
    }

    /// Where a batch's item is; nil while the batch holds it. An item found nowhere (it moved
    /// between two looks) is looked for again.
    private func batchItemState(_ name: String, of id: Int64) -> QueueItemState? {
        let order: [QueueItemState] = [.done, .running, .pending, .failed, .retryable, .scheduled, .cancelled]
        for _ in 0..<3 {
            if FileManager.default.fileExists(atPath: batchFolder(id) + "/held/" + name) { return nil }
            if let state = order.first(where: { FileManager.default.fileExists(atPath: itemPath(name, in: $0)) }) { return state }
        }
        return nil
    }
}
