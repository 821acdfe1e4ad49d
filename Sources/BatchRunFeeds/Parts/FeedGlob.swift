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
    /// The pattern taken apart, matched against a path by `matchesWhole(_:)`.
    private let tokens: [GlobToken]

    /// Nil when `pattern` has no wildcard (`*`, `?` or `[`): a plain path, not a glob.
    package init?(_ pattern: String) {
        guard Self.isGlob(pattern) else { return nil }
        self.pattern = pattern
        self.tokens = GlobToken.tokens(of: pattern)
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
    /// A name starting with a dot is left out where a wildcard would match it, not in the
    /// pattern's own folders (`/srv/.exports/part-*.csv` lists that folder's parts).
    package func filter(_ paths: [String]) -> [String] {
        let literalNames = literalFolder.split(separator: "/").count
        return paths.filter { path in
            !path.split(separator: "/").dropFirst(literalNames).contains { $0.hasPrefix(".") && $0 != "." && $0 != ".." }
                && matchesWhole(path)
        }.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// True when the pattern matches the whole of `path`.
    package func matches(_ path: String) -> Bool {
        !filter([path]).isEmpty
    }

    /// The most folder entries a walk reads before it gives up (`FeedGlobError.tooManyEntries`):
    /// a stranger's `/**/*.csv` must not walk a whole machine.
    package static let maximumEntries = 200_000

    /// The regular files (or links to them) the pattern names, as paths in the pattern's own
    /// form (relative stays relative), in name order; `base` is the folder a relative pattern
    /// is read against. Throws when a folder on the way cannot be read, or the walk reads more
    /// than `limit` entries.
    package func localParts(relativeTo base: String?, limit: Int = maximumEntries) throws -> [String] {
        let depth = pattern.contains("**") ? Int.max : pattern.dropFirst(literalFolder.count).split(separator: "/").count
        var found: [String] = []
        var budget = limit
        try Self.walk(walkRoot(relativeTo: base), written: literalFolder, depth: depth, into: &found, budget: &budget, limit: limit)
        return filter(found)
    }

    /// The folder a walk starts from (the literal prefix's folder), against `base` when relative.
    package func walkRoot(relativeTo base: String?) -> String {
        if literalFolder.hasPrefix("/") { return literalFolder }
        let root = (base.map { $0.hasSuffix("/") ? $0 : $0 + "/" } ?? "") + literalFolder
        return root.isEmpty ? "." : root
    }

    /// The literal prefix up to its last `/` (empty when it has none).
    private var literalFolder: String {
        let prefix = literalPrefix
        return prefix.contains("/") ? String(prefix[...prefix.lastIndex(of: "/")!]) : ""
    }

    private static func walk(_ directory: String, written: String, depth: Int, into found: inout [String], budget: inout Int,
                             limit: Int) throws {
        guard depth > 0 else { return }
        let names = try FileManager.default.contentsOfDirectory(atPath: directory)
        budget -= names.count
        guard budget >= 0 else { throw FeedGlobError.tooManyEntries(folder: directory, limit: limit) }
        for name in names where !name.hasPrefix(".") {
            let path = (directory.hasSuffix("/") ? directory : directory + "/") + name
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else { continue }
            if isFolder.boolValue {
                // A link to a folder is not followed: it could lead back up the tree.
                let isLink = (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) != nil
                if !isLink { try walk(path, written: written + name + "/", depth: depth - 1, into: &found, budget: &budget, limit: limit) }
            } else if Self.isRegularFile(path) {
                // Not a pipe, socket or device: opening a FIFO would wait for ever.
                found.append(written + name)
            }
        }
    }

    /// True for a regular file, or a link to one.
    private static func isRegularFile(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG
    }

    /// The pattern against the whole of `path`, as a set of pattern positions advanced one
    /// character at a time: time in proportion to the pattern's length times the path's, whatever
    /// the stars (a pattern from a stranger's item cannot make it backtrack for ever).
    /// A position below zero, `-(p + 1)`, is inside a folder's name that `**/` at `p` matches:
    /// from there only a `/` leads on (back to `p`, at the start of the next name), so `**/`
    /// never ends in the middle of a name (`data/**/part-*` does not match `data/xpart-1`).
    private func matchesWhole(_ path: String) -> Bool {
        var positions = closure([0])
        for character in path {
            var next = Set<Int>()
            for position in positions where position < tokens.count {
                if position < 0 {
                    next.insert(character == "/" ? -position - 1 : position)
                    continue
                }
                switch tokens[position] {
                case .literal(let expected): if character == expected { next.insert(position + 1) }
                case .anyCharacter: if character != "/" { next.insert(position + 1) }
                case .characterClass(let members, let negated):
                    if character != "/" && members.contains(where: { $0.contains(character) }) != negated { next.insert(position + 1) }
                case .anyInName: if character != "/" { next.insert(position) }
                case .anything: next.insert(position)
                case .anyFolders:
                    // At the start of a name: a folder's name begins (a `/` alone is an empty one).
                    next.insert(character == "/" ? position : -position - 1)
                }
            }
            positions = closure(next)
            if positions.isEmpty { return false }
        }
        return positions.contains(tokens.count)
    }

    /// The positions, with those a star may skip to by matching nothing.
    private func closure(_ positions: Set<Int>) -> Set<Int> {
        var result = positions
        var pending = Array(positions)
        while let position = pending.popLast() {
            guard position >= 0, position < tokens.count else { continue }
            switch tokens[position] {
            case .anyInName, .anything, .anyFolders:
                if result.insert(position + 1).inserted { pending.append(position + 1) }
            default: break
            }
        }
        return result
    }
}

/// One element of a glob: `**/` any folders (none included), `**` anything, `*` and `?` within
/// a name, `[a-c]` and `[!a-c]` a class, any other character itself.
private enum GlobToken: Sendable, Hashable {
    case literal(Character)
    case anyCharacter
    case anyInName
    case anything
    case anyFolders
    case characterClass([ClosedRange<Character>], negated: Bool)

    static func tokens(of pattern: String) -> [GlobToken] {
        var tokens: [GlobToken] = []
        var characters = Array(pattern)[...]
        while let character = characters.popFirst() {
            switch character {
            case "*" where characters.first == "*":
                characters.removeFirst()
                if characters.first == "/" {
                    characters.removeFirst()
                    tokens.append(.anyFolders)
                } else {
                    tokens.append(.anything)
                }
            case "*": tokens.append(.anyInName)
            case "?": tokens.append(.anyCharacter)
            case "[":
                // A `]` right after `[` (or `[!`) is a member; an unclosed `[` is itself.
                let start = characters.first == "!" || characters.first == "^" ? characters.index(after: characters.startIndex) : characters.startIndex
                guard start < characters.endIndex,
                      let close = characters[characters.index(after: start)...].firstIndex(of: "]") else {
                    tokens.append(.literal("["))
                    continue
                }
                let negated = start != characters.startIndex
                let members = Array(characters[start..<close])
                characters = characters[(close + 1)...]
                var ranges: [ClosedRange<Character>] = []
                var index = 0
                while index < members.count {
                    if index + 2 < members.count, members[index + 1] == "-", members[index] <= members[index + 2] {
                        ranges.append(members[index]...members[index + 2])
                        index += 3
                    } else {
                        ranges.append(members[index]...members[index])
                        index += 1
                    }
                }
                tokens.append(.characterClass(ranges, negated: negated))
            default: tokens.append(.literal(character))
            }
        }
        return tokens
    }
}
