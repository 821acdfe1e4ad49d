import BatchRunEngine
import BatchRunStore
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
package struct ItemHandoff: Codable, Sendable {
    package var params: [String: String]
    package var confinement: ItemConfinement
    package var text: String?
    package var identity: String?
    /// An item of a fan-out batch: what it runs of its job file.
    package var role: FanOutRole?

    package init(params: [String: String], confinement: ItemConfinement, text: String? = nil, identity: String? = nil,
                 role: FanOutRole? = nil) {
        self.params = params
        self.confinement = confinement
        self.text = text
        self.identity = identity
        self.role = role
    }

    /// The handoff as JSON in a file no other process can open: made by `tmpfile` (removed from
    /// its folder as it is made), read from the start. The caller closes the descriptor.
    package func unlinkedFile() throws -> Int32 {
        let bytes = Array(try JSONEncoder().encode(self))
        guard let file = tmpfile() else { throw FileAccessError(.write, path: "a temporary file", errno: errno) }
        // Above 4 (a child gets its descriptors moved to 3 and 4) and close-on-exec, at once.
        let descriptor = fcntl(fileno(file), F_DUPFD_CLOEXEC, 5)
        fclose(file)
        guard descriptor >= 0 else { throw FileAccessError(.write, path: "a temporary file", errno: errno) }
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if count <= 0 && errno != EINTR {
                let error = FileAccessError(.write, path: "a temporary file", errno: errno)
                close(descriptor)
                throw error
            }
            written += max(count, 0)
        }
        lseek(descriptor, 0, SEEK_SET)
        return descriptor
    }

    /// The handoff a worker left at `descriptor`, which is closed.
    package static func read(from descriptor: Int32) throws -> ItemHandoff {
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        return try JSONDecoder().decode(ItemHandoff.self, from: handle.readDataToEndOfFile())
    }
}
