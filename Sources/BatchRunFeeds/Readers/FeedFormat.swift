/// The format of an insert feed, from its file extension (the one before a compression suffix:
/// `flights.csv.gz` is CSV), or from `format:` in the job file.
package enum FeedFormat: String, Sendable, Hashable, CaseIterable {
    case csv, tsv, json, ndjson

    /// `.csv`, `.tsv`, `.json`, `.ndjson` or `.jsonl` (case-insensitive), before an optional `.gz`
    /// or `.zst`; nil for anything else.
    package init?(path: String) {
        switch FeedCompression.strip(path).split(separator: ".").last?.lowercased() {
        case "csv": self = .csv
        case "tsv": self = .tsv
        case "json": self = .json
        case "ndjson", "jsonl": self = .ndjson
        default: return nil
        }
    }
}
