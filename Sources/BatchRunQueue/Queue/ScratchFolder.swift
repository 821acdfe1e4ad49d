import BatchRunStore
import Foundation
import Synchronization

/// A folder only this process can reach, for what a worker keeps while an item runs (a
/// PostgreSQL item's log and report, the items' metrics): made on first use by `mkdtemp` under
/// `$TMPDIR` (a name nobody can guess or plant beforehand, mode 0700), removed with its files
/// when the value goes or `remove()` is called. Nothing of an item is written to a folder other
/// users share.
///
/// ```swift
/// let scratch = ScratchFolder(prefix: "batchrun-worker")
/// let log = try scratch.path() + "/12.log"
/// ```
package final class ScratchFolder: Sendable {
    private let prefix: String
    private let made = Mutex<String?>(nil)

    package init(prefix: String) {
        self.prefix = prefix
    }

    /// The folder's path, made now when it is not there yet.
    package func path() throws -> String {
        try made.withLock { made in
            if let made { return made }
            let base = (ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp")
            var template = Array("\(base)/\(prefix)-XXXXXX".utf8CString)
            guard let folder = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
                throw FileAccessError(.write, path: "\(base)/\(prefix)-XXXXXX", errno: errno)
            }
            made = String(cString: folder)
            return made!
        }
    }

    /// Removes the folder and what is in it (made again on the next `path()`).
    package func remove() {
        made.withLock { made in
            if let folder = made { try? FileManager.default.removeItem(atPath: folder) }
            made = nil
        }
    }

    deinit {
        remove()
    }
}
