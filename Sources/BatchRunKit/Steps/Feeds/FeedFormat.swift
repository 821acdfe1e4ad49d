/// The format of an insert feed, from its file extension.
package enum FeedFormat: String, Sendable, Hashable, CaseIterable {
    case csv, tsv, json, ndjson

    /// `.csv`, `.tsv`, `.json`, `.ndjson` or `.jsonl` (case-insensitive); nil for anything else.
    package init?(path: String) {
        switch path.split(separator: ".").last?.lowercased() {
        case "csv": self = .csv
        case "tsv": self = .tsv
        case "json": self = .json
        case "ndjson", "jsonl": self = .ndjson
        default: return nil
        }
    }
}
