import BatchRunStore
import Foundation

/// A local output file: written beside its final name and moved into place by `finish()`,
/// relative to its folder's descriptor (`ConfinedFolder`).
final class LocalFileSink: OutputSink {
    package let folder: ConfinedFolder
    /// The name the bytes are written to, in `folder`, until they are complete.
    let temporaryName: String
    package let handle: FileHandle

    package init(path: String, confinement: PathConfinement?) throws {
        folder = try ConfinedFolder.holding(path, within: confinement, creating: true)
        temporaryName = folder.name + ".partial-\(ProcessInfo.processInfo.processIdentifier)"
        handle = try folder.openForWriting(temporaryName, truncating: true)
    }

    package func write(_ bytes: Data) throws {
        try handle.write(contentsOf: bytes)
    }

    package func finish() throws {
        try handle.close()
        try folder.rename(temporaryName, to: folder.name)
    }

    package func abandon() {
        try? handle.close()
        folder.remove(temporaryName)
    }
}
