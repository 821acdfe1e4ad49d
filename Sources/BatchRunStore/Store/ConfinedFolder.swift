import Foundation

/// A folder opened once (by `PathConfinement.folder(holding:creating:)`, or by its path for an
/// unconfined run) and a file's name in it: the file is opened, made, renamed and removed
/// relative to the folder's descriptor, never through a path again, and never through a
/// symbolic link in its own name (`O_NOFOLLOW`). What a path led to when it was checked is what
/// is touched, whatever is swapped in later.
///
/// ```swift
/// let folder = try confinement.folder(holding: "/srv/nightly/out/stale.csv", creating: true)
/// let handle = try folder.create(folder.name + ".partial")
/// try folder.rename(folder.name + ".partial", to: folder.name)
/// ```
package final class ConfinedFolder {
    /// The open folder.
    package let descriptor: Int32
    /// The folder's path as it was resolved (for messages and for opening by name).
    package let path: String
    /// The file's name in it.
    package let name: String
    /// The path as the job file gave it, for messages.
    package let given: String

    package init(descriptor: Int32, path: String, name: String, given: String) {
        self.descriptor = descriptor
        self.path = path
        self.name = name
        self.given = given
    }

    /// The folder holding `path`, opened by its path (made when missing and `creating`): an
    /// unconfined run's.
    package static func unconfined(holding path: String, creating: Bool) throws(PathConfinementError) -> ConfinedFolder {
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent().path
        if creating { try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
        let descriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw PathConfinementError(path: path, reason: "cannot open its folder: \(String(cString: strerror(errno)))")
        }
        return ConfinedFolder(descriptor: descriptor, path: folder, name: url.lastPathComponent, given: path)
    }

    /// The folder holding `path`: within `confinement` when there is one, else as the path names it.
    package static func holding(_ path: String, within confinement: PathConfinement?, creating: Bool) throws(PathConfinementError)
        -> ConfinedFolder {
        if let confinement { return try confinement.folder(holding: path, creating: creating) }
        return try unconfined(holding: path, creating: creating)
    }

    deinit { close(descriptor) }

    /// The file's full path as resolved when the folder was opened.
    package var filePath: String { path == "/" ? "/" + name : path + "/" + name }

    /// Opens the file for reading (a FIFO does not block the open).
    package func openForReading() throws(PathConfinementError) -> FileHandle {
        let file = openat(descriptor, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard file >= 0 else { throw failure(errno) }
        _ = fcntl(file, F_SETFL, fcntl(file, F_GETFL) & ~O_NONBLOCK)
        return FileHandle(fileDescriptor: file, closeOnDealloc: true)
    }

    /// Opens `file` (a name in this folder) for writing, made when missing, emptied when `truncating`.
    package func openForWriting(_ file: String, truncating: Bool) throws(PathConfinementError) -> FileHandle {
        let descriptor = openat(descriptor, file, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | (truncating ? O_TRUNC : 0), 0o644)
        guard descriptor >= 0 else { throw failure(errno, file) }
        return FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    }

    /// True when `file` (a name in this folder) exists, a symbolic link included.
    package func contains(_ file: String) -> Bool {
        var info = stat()
        return fstatat(descriptor, file, &info, AT_SYMLINK_NOFOLLOW) == 0
    }

    /// The identity (device, inode) of `file` in this folder, not following a link; nil when missing.
    package func identity(of file: String) -> (device: UInt64, inode: UInt64)? {
        var info = stat()
        guard fstatat(descriptor, file, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
        return (UInt64(info.st_dev), UInt64(info.st_ino))
    }

    /// Renames `file` to `other` in this folder, replacing `other` (a link by that name is
    /// replaced, never followed).
    package func rename(_ file: String, to other: String) throws(PathConfinementError) {
        guard renameat(descriptor, file, descriptor, other) == 0 else { throw failure(errno, file) }
    }

    /// Removes `file` from this folder (nothing when missing).
    package func remove(_ file: String) {
        _ = unlinkat(descriptor, file, 0)
    }

    private func failure(_ code: Int32, _ file: String? = nil) -> PathConfinementError {
        let shown = file.map { path == "/" ? "/" + $0 : path + "/" + $0 } ?? given
        let reason = code == ELOOP ? "is a symbolic link now (it was not when checked); refused, nothing was opened"
            : String(cString: strerror(code))
        return PathConfinementError(path: shown, reason: reason)
    }
}
