import Foundation

/// A `from:` that names many parts (section 17): `*` and `?` match within a name, `[a-c]` and
/// `[!0-9]` a class of characters, and `**` any number of folders. Files on this machine are
/// listed with `localParts(relativeTo:)`; listed S3 keys are kept with `filter(_:)`. Hidden
/// files and folders (a name starting with a dot) are not parts, as a shell's glob leaves them out.
///
/// ```swift
/// let glob = FeedGlob("exports/**/part-*.csv.gz")!    // nil for a text without a wildcard
/// glob.literalPrefix                                  // "exports/" (an S3 listing's Prefix)
/// glob.filter(["exports/2026/part-1.csv.gz", "exports/notes.txt"])   // ["exports/2026/part-1.csv.gz"]
/// try glob.localParts(relativeTo: "/srv/nightly")     // the matching files, in name order
/// ```
package struct FeedGlob: Sendable, Hashable {
    /// The pattern as written.
    package let pattern: String
    /// The pattern as a regular expression over a whole path (`/` separates names).
    private let expression: String

    /// Nil when `pattern` has no wildcard (`*`, `?` or `[`): a plain path, not a glob.
    package init?(_ pattern: String) {
        guard Self.isGlob(pattern) else { return nil }
        self.pattern = pattern
        self.expression = Self.expression(for: pattern)
    }

    /// True when `text` has a wildcard: `*`, `?` or `[`.
    package static func isGlob(_ text: String) -> Bool {
        text.contains { $0 == "*" || $0 == "?" || $0 == "[" }
    }

    /// Everything before the first wildcard: the folder to list from, or an S3 listing's `Prefix`.
    package var literalPrefix: String {
        String(pattern.prefix { $0 != "*" && $0 != "?" && $0 != "[" })
    }

    /// The paths of `paths` the pattern matches, in name order (byte order, as S3 lists keys).
    package func filter(_ paths: [String]) -> [String] {
        guard let regex = try? Regex(expression) else { return [] }
        return paths.filter { path in
            path.wholeMatch(of: regex) != nil && !path.split(separator: "/").contains { $0.hasPrefix(".") && $0 != "." && $0 != ".." }
        }.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// True when the pattern matches the whole of `path`.
    package func matches(_ path: String) -> Bool {
        !filter([path]).isEmpty
    }

    /// The regular files (or links to them) the pattern names, as paths in the pattern's own
    /// form (relative stays relative), in name order; `base` is the folder a relative pattern
    /// is read against. Throws when a folder on the way cannot be read.
    package func localParts(relativeTo base: String?) throws -> [String] {
        let prefix = literalPrefix
        let folder = prefix.contains("/") ? String(prefix[...prefix.lastIndex(of: "/")!]) : ""
        let root: String
        if folder.hasPrefix("/") { root = folder } else { root = (base.map { $0.hasSuffix("/") ? $0 : $0 + "/" } ?? "") + folder }
        let depth = pattern.contains("**") ? Int.max : pattern.dropFirst(folder.count).split(separator: "/").count
        var found: [String] = []
        try Self.walk(root.isEmpty ? "." : root, written: folder, depth: depth, into: &found)
        return filter(found)
    }

    private static func walk(_ directory: String, written: String, depth: Int, into found: inout [String]) throws {
        guard depth > 0 else { return }
        let names = try FileManager.default.contentsOfDirectory(atPath: directory)
        for name in names where !name.hasPrefix(".") {
            let path = (directory.hasSuffix("/") ? directory : directory + "/") + name
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else { continue }
            if isFolder.boolValue {
                // A link to a folder is not followed: it could lead back up the tree.
                let isLink = (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) != nil
                if !isLink { try walk(path, written: written + name + "/", depth: depth - 1, into: &found) }
            } else {
                found.append(written + name)
            }
        }
    }

    /// `**/` any folders (none included), `**` anything, `*` and `?` within a name, `[!...]` a
    /// negated class; everything else literally.
    private static func expression(for pattern: String) -> String {
        var result = ""
        var characters = Array(pattern)[...]
        while let character = characters.popFirst() {
            switch character {
            case "*" where characters.first == "*":
                characters.removeFirst()
                if characters.first == "/" {
                    characters.removeFirst()
                    result += "(?:[^/]*/)*"
                } else {
                    result += ".*"
                }
            case "*": result += "[^/]*"
            case "?": result += "[^/]"
            case "[":
                guard let close = characters.dropFirst().firstIndex(of: "]") else {
                    result += "\\["
                    continue
                }
                var members = String(characters[..<close])
                characters = characters[(close + 1)...]
                if members.hasPrefix("!") { members = "^" + members.dropFirst() }
                result += "[" + members.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "[", with: "\\[") + "]"
            default:
                result += "\\^$.|+(){}\\".contains(character) ? "\\\(character)" : String(character)
            }
        }
        return result
    }
}
