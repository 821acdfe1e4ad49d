/// How a feed or an output is compressed: from its name's last suffix (`.gz`, `.zst`), or from
/// `compression:` in the job file.
package enum FeedCompression: String, Sendable, Hashable, CaseIterable, Codable {
    case gzip, zstd, none

    /// `.gz` is gzip, `.zst` zstd (case-insensitive); anything else none.
    package init(path: String) {
        switch Self.suffix(of: path) {
        case "gz": self = .gzip
        case "zst": self = .zstd
        default: self = .none
        }
    }

    /// The name without its compression suffix: `flights.csv.gz` gives `flights.csv`.
    package static func strip(_ path: String) -> String {
        guard FeedCompression(path: path) != .none, let dot = path.lastIndex(of: ".") else { return path }
        return String(path[..<dot])
    }

    private static func suffix(of path: String) -> String? {
        let name = path.split(separator: "/").last ?? Substring(path)
        guard name.contains(".") else { return nil }
        return name.split(separator: ".").last?.lowercased()
    }
}
