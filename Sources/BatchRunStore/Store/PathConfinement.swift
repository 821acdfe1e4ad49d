import Foundation

/// The folders a queue worker lets its items touch (`batchrun worker --root DIR`): every feed,
/// output and SQLite store of an item must lie inside one of them once symbolic links and `..`
/// are resolved. It lives with the Store, the lowest layer that opens an item's files (an
/// SQLite store); the steps' feeds and outputs and the job-file loader are handed the same value.
///
/// Checked twice. When an item is loaded, `violation(of:)` resolves each path and names the
/// one that reaches outside, so the item fails as invalid before anything runs. At each open
/// (`folder(holding:creating:)`), the path is resolved and checked again, and the resolved path
/// is then walked from the root's own descriptor one folder at a time with `O_NOFOLLOW`: the
/// walk cannot leave the root, and a symbolic link swapped in after either check makes it fail
/// instead of being followed. The file itself is opened, made, renamed or removed relative to
/// that folder's descriptor, its own name with `O_NOFOLLOW` too (`ConfinedFolder`).
///
/// ```swift
/// let confinement = try PathConfinement(roots: ["/srv/nightly"])
/// confinement.violation(of: "/etc/passwd")   // "/etc/passwd: outside the folders ..."
/// ```
package struct PathConfinement: Sendable, Hashable {
    /// The folders, resolved.
    package let roots: [String]

    /// Each root must be an existing folder; it is resolved once, here.
    package init(roots: [String]) throws(PathConfinementError) {
        var resolved: [String] = []
        for root in roots {
            var isDirectory: ObjCBool = false
            guard let real = Self.realPath(root), FileManager.default.fileExists(atPath: real, isDirectory: &isDirectory),
                  isDirectory.boolValue else {
                throw PathConfinementError(path: root, reason: "no such folder (--root takes an existing folder)")
            }
            if !resolved.contains(real) { resolved.append(real) }
        }
        self.roots = resolved
    }

    /// Why `path` may not be touched (it reaches outside every root, or cannot be resolved), or
    /// nil when it may.
    package func violation(of path: String) -> PathConfinementError? {
        guard let resolved = Self.resolve(path) else {
            return PathConfinementError(path: path, reason: "cannot be resolved (a symbolic link that leads nowhere, or a folder "
                                        + "this worker cannot read), so it cannot be confined to \(rootList)")
        }
        return root(containing: resolved) == nil ? outside(path, resolved: resolved) : nil
    }

    /// Opens the folder holding `path` (its missing folders made when `creating`), walked from
    /// its root with `O_NOFOLLOW` after the path was resolved and checked again.
    package func folder(holding path: String, creating: Bool) throws(PathConfinementError) -> ConfinedFolder {
        guard let resolved = Self.resolve(path) else {
            throw violation(of: path) ?? PathConfinementError(path: path, reason: "cannot be resolved")
        }
        guard let root = root(containing: resolved), resolved != root else { throw outside(path, resolved: resolved) }
        let names = resolved.dropFirst(root == "/" ? 1 : root.count + 1).split(separator: "/").map(String.init)
        var descriptor = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw PathConfinementError(path: path, reason: "cannot open \(root): \(String(cString: strerror(errno)))") }
        var walked = root
        for name in names.dropLast() {
            var next = openat(descriptor, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            if next < 0 && errno == ENOENT && creating {
                _ = mkdirat(descriptor, name, 0o755)
                next = openat(descriptor, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            }
            let failure = errno
            close(descriptor)
            walked += (walked == "/" ? "" : "/") + name
            guard next >= 0 else {
                let reason = failure == ELOOP || failure == ENOTDIR
                    ? "\(walked) is no longer the folder it was when checked (a symbolic link or a file now); refused, nothing was opened"
                    : "cannot open \(walked): \(String(cString: strerror(failure)))"
                throw PathConfinementError(path: path, reason: reason)
            }
            descriptor = next
        }
        return ConfinedFolder(descriptor: descriptor, path: walked, name: names.last ?? "", given: path)
    }

    /// Opens `path` for reading: within `confinement` through `folder(holding:creating:)`, else
    /// as it names it.
    package static func openForReading(_ path: String, within confinement: PathConfinement?) throws(PathConfinementError) -> FileHandle {
        guard let confinement else {
            guard let handle = FileHandle(forReadingAtPath: path) else {
                throw PathConfinementError(path: path, reason: "cannot open: \(String(cString: strerror(errno)))")
            }
            return handle
        }
        return try confinement.folder(holding: path, creating: false).openForReading()
    }

    // MARK: Resolving

    /// `path` with every symbolic link and `..` resolved as far as it exists, the missing rest
    /// appended; nil when that cannot be done (a link that leads nowhere or loops, a folder that
    /// cannot be read, `..` after a missing name).
    package static func resolve(_ path: String) -> String? {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        var existing = absolute.split(separator: "/").map(String.init)
        var missing: [String] = []
        while true {
            let candidate = "/" + existing.joined(separator: "/")
            if let real = realPath(candidate) {
                let rest = missing.filter { $0 != "." }
                if rest.contains("..") { return nil }
                return rest.reduce(real) { $0 == "/" ? "/" + $1 : $0 + "/" + $1 }
            }
            var info = stat()
            if errno != ENOENT || lstat(candidate, &info) == 0 { return nil }   // there, but not resolvable
            guard let last = existing.popLast() else { return nil }
            missing.insert(last, at: 0)
        }
    }

    static func realPath(_ path: String) -> String? {
        guard let pointer = realpath(path, nil) else { return nil }
        defer { free(pointer) }
        return String(cString: pointer)
    }

    private func root(containing resolved: String) -> String? {
        roots.first { resolved == $0 || resolved.hasPrefix($0 == "/" ? "/" : $0 + "/") }
    }

    private var rootList: String { roots.joined(separator: ", ") }

    private func outside(_ path: String, resolved: String) -> PathConfinementError {
        PathConfinementError(path: path, reason: "outside the folders this worker lets items touch (\(rootList))"
                             + (resolved == path ? "" : "; it resolves to \(resolved)"))
    }
}

/// A path an item may not touch, and why; an item that names one is invalid.
package struct PathConfinementError: BatchRunError {
    package let path: String
    package let reason: String

    package var code: String { "confinement.refused" }
    package var message: String { description }
    package var isInvalid: Bool { true }
    package var description: String { "\(path): \(reason)" }

    package init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }
}
