import BatchRunKit
import Foundation

/// What a queue worker hands the process that runs one of its items besides its `batchrun run`
/// arguments, never on a command line (which every local user may read in `ps`): the item's
/// params, what the worker lets it touch, and a PostgreSQL item's text and run identity (its
/// one file argument then only names it). A runner gets it in its `RunnerRequest`; a folder
/// item's own child reads it from a descriptor (`run --handoff-descriptor N`), a file that was
/// unlinked before the child started.
///
/// ```swift
/// let handoff = ItemHandoff(params: ["day": "2026-11-28"], confinement: ItemConfinement())
/// let descriptor = try handoff.unlinkedFile()
/// ```
struct ItemHandoff: Codable {
    var params: [String: String]
    var confinement: ItemConfinement
    var text: String?
    var identity: String?

    /// The handoff as JSON in a file no other process can open: made by `tmpfile` (removed from
    /// its folder as it is made), read from the start. The caller closes the descriptor.
    func unlinkedFile() throws -> Int32 {
        let bytes = Array(try JSONEncoder().encode(self))
        guard let file = tmpfile() else { throw CocoaError(.fileWriteUnknown) }
        let descriptor = dup(fileno(file))
        fclose(file)
        guard descriptor >= 0 else { throw CocoaError(.fileWriteUnknown) }
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if count <= 0 && errno != EINTR {
                close(descriptor)
                throw CocoaError(.fileWriteUnknown)
            }
            written += max(count, 0)
        }
        lseek(descriptor, 0, SEEK_SET)
        return descriptor
    }

    /// The handoff a worker left at `descriptor`, which is closed.
    static func read(from descriptor: Int32) throws -> ItemHandoff {
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        return try JSONDecoder().decode(ItemHandoff.self, from: handle.readDataToEndOfFile())
    }
}
