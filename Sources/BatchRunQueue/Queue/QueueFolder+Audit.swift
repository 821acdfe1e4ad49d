import BatchRunStore
import Foundation

/// A queue folder's audit log: `audit.log`, one JSON object a line, each appended in one
/// `write` to a file opened `O_APPEND` (lines of any number of writers never interleave).
extension QueueFolder {
    var auditFile: String { path + "/audit.log" }

    package func appendAudit(_ entry: QueueAuditEntry) throws {
        var line = try JSONEncoder.sorted.encode(entry)
        line.append(0x0A)
        let descriptor = open(auditFile, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw FileAccessError(.write, path: auditFile, errno: errno) }
        defer { close(descriptor) }
        let written = line.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        guard written == line.count else { throw FileAccessError(.write, path: auditFile, errno: errno) }
    }

    package func audit() throws -> [QueueAuditEntry] {
        guard let handle = FileHandle(forReadingAtPath: auditFile) else { return [] }
        defer { try? handle.close() }
        // The tail: at most the newest lines a listing shows, whatever the file's length.
        let size = (try? handle.seekToEnd()) ?? 0
        let tail = UInt64(QueueAuditEntry.listed * 512)
        try? handle.seek(toOffset: size > tail ? size - tail : 0)
        // `readToEnd` throws where `readDataToEndOfFile` would trap (a folder in the file's place).
        let text = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
        var lines = text.split(separator: "\n")
        if size > tail { lines = Array(lines.dropFirst()) }   // the first may be cut
        return lines.suffix(QueueAuditEntry.listed).compactMap { try? JSONDecoder().decode(QueueAuditEntry.self, from: Data($0.utf8)) }
    }
}
