/// The version of batchrun and BatchRunKit, as the reports' footers print it, and the form a
/// build's `git describe` gives `batchrun --version` and the Debian package.
///
/// ```swift
/// print("batchrun \(BatchRunVersion.current)")                         // batchrun 0.1.0
/// BatchRunVersion.version(describe: "v0.1.0-3-g2976f97")              // "0.1.0+3.g2976f97"
/// ```
package enum BatchRunVersion {
    package static let current = "0.1.0"

    /// `v0.1.0` is `0.1.0`; `v0.1.0-3-g2976f97` (3 commits after the tag) is `0.1.0+3.g2976f97`,
    /// which a package manager sorts after `0.1.0`; without a tag (`untagged-523-g2976f97`, 523
    /// commits so far) it is the source's version with the count and the commit,
    /// `0.1.0+523.g2976f97`, so builds still sort in order; `-dirty` (uncommitted changes) is
    /// `.dirty`, and outside a checkout (`unknown`) the source's version alone. A hyphen in the
    /// tag is `~` (`v1.2.0-rc1` is `1.2.0~rc1`, before `1.2.0`): in a native Debian package's
    /// version a hyphen would start a revision.
    package static func version(describe: String) -> String {
        var rest = Substring(describe)
        var dirty = ""
        if rest.hasSuffix("-dirty") {
            rest = rest.dropLast("-dirty".count)
            dirty = ".dirty"
        }
        if rest.hasPrefix("untagged-") {
            let parts = rest.dropFirst("untagged-".count).split(separator: "-")
            guard parts.count == 2, Int(parts[0]) != nil, parts[1].first == "g" else { return current }
            return current + "+\(parts[0]).\(parts[1])" + dirty
        }
        guard rest.first == "v", rest.dropFirst().first?.isNumber == true else {
            guard !rest.isEmpty, rest != "unknown" else { return current }
            return current + "+g" + rest + dirty
        }
        let parts = rest.dropFirst().split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count >= 3, Int(parts[parts.count - 2]) != nil, parts[parts.count - 1].first == "g" else {
            return parts.joined(separator: "~") + dirty
        }
        return parts.dropLast(2).joined(separator: "~") + "+\(parts[parts.count - 2]).\(parts[parts.count - 1])" + dirty
    }
}
