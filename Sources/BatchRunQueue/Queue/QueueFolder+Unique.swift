import BatchRunStore
import Foundation

/// Unique items in a queue folder (`submit --unique`): `.unique/KEY` names the waiting or
/// running item with that text and those params (KEY a hash of both). A submission looks and
/// writes under an exclusive lock on `.unique/.lock`, and so does a worker or `cancel` that ends
/// the item and removes its key.
extension QueueFolder {
    var uniqueFolder: String { path + "/.unique" }

    /// Queues the item unless the same text with the same params is waiting or running.
    func submitUnique(text: String, name: String, params: [String: String], sequence: Int, submission: QueueSubmission) throws -> QueueSubmitted {
        let key = Self.uniqueKey(text: text, params: params)
        return try withUniqueLock {
            let marker = uniqueFolder + "/" + key
            if let existing = try? String(contentsOfFile: marker, encoding: .utf8),
               let state = [QueueItemState.pending, .scheduled, .retryable, .running].first(where: {
                   FileManager.default.fileExists(atPath: itemPath(existing, in: $0))
               }) {
                return QueueSubmitted(name: "\(state.rawValue)/\(existing)", existing: true)
            }
            let item = try submit(text: text, name: name, params: params, sequence: sequence, submission: submission)
            try Data(item.utf8).write(to: URL(fileURLWithPath: marker), options: .atomic)
            let state = QueueFolderName.due(of: item).map { $0 > QueueClock.now() } == true ? "scheduled" : "pending"
            return QueueSubmitted(name: "\(state)/\(item)")
        }
    }

    /// Removes the key of an item that ended (when it has one).
    func releaseUnique(of name: String) {
        guard FileManager.default.fileExists(atPath: uniqueFolder),
              let text = try? String(contentsOfFile: itemPathAnywhere(name) ?? "", encoding: .utf8) else { return }
        var body = Substring(text)
        var params: [String: String] = [:]
        while body.hasPrefix("# batchrun-"), let end = body.firstIndex(of: "\n") {
            let line = body[..<end]
            if line.hasPrefix(Self.paramsPrefix) {
                params = (try? JSONDecoder().decode([String: String].self, from: Data(line.dropFirst(Self.paramsPrefix.count).utf8))) ?? [:]
            }
            body = body[body.index(after: end)...]
        }
        let marker = uniqueFolder + "/" + Self.uniqueKey(text: String(body), params: params)
        try? withUniqueLock {
            if (try? String(contentsOfFile: marker, encoding: .utf8)) == name { unlink(marker) }
        }
    }

    /// The item's path in whichever folder holds it.
    func itemPathAnywhere(_ name: String) -> String? {
        QueueItemState.allCases.map { itemPath(name, in: $0) }.first { FileManager.default.fileExists(atPath: $0) }
    }

    private func withUniqueLock<T>(_ body: () throws -> T) throws -> T {
        try FileManager.default.createDirectory(atPath: uniqueFolder, withIntermediateDirectories: true)
        let descriptor = open(uniqueFolder + "/.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw FileAccessError(.write, path: uniqueFolder + "/.lock", errno: errno) }
        defer { close(descriptor) }
        flock(descriptor, LOCK_EX)
        return try body()
    }

    /// A hash of the text and params (FNV-1a, 64 bits, twice with different seeds), as hex.
    static func uniqueKey(text: String, params: [String: String]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let bytes = Array(text.utf8) + [0] + Array((try? encoder.encode(params)) ?? Data())
        func fnv(_ seed: UInt64) -> UInt64 {
            bytes.reduce(seed) { ($0 ^ UInt64($1)) &* 0x100000001b3 }
        }
        return String(format: "%016llx%016llx", fnv(0xcbf29ce484222325), fnv(0x84222325cbf29ce4))
    }
}
