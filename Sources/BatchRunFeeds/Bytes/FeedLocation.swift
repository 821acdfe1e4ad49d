/// Where a feed's bytes come from, or an output's go, as the job file names it (section 14),
/// taken apart once: a file on this machine, an `http://` or `https://` URL, or an S3 object.
/// This is the one place a location's scheme is read; everything else switches over the cases
/// (a new scheme is a new case here, and the compiler names every place that must handle it).
///
/// ```swift
/// FeedLocation("s3://feeds/2026/flights.csv.gz")   // .s3(S3Location(bucket: "feeds", key: "2026/flights.csv.gz"))
/// FeedLocation("data/flights.csv")                 // .file("data/flights.csv")
/// ```
package enum FeedLocation: Sendable, Hashable {
    /// A path on this machine, as written (resolved against the job file's folder by its reader).
    case file(String)
    /// An `http://` or `https://` URL, as written (query string included).
    case http(String)
    /// `s3://BUCKET/KEY`.
    case s3(S3Location)
    /// An `s3://` URL that names no object (no key, or no valid bucket name): an error wherever it is written.
    case s3WithoutObject(String)

    /// The schemes a location may start with, as written in messages.
    package static let remoteSchemes = ["http://", "https://", "s3://"]

    package init(_ text: String) {
        let lowered = text.lowercased()
        if lowered.hasPrefix("s3://") {
            self = S3Location(url: text).map(FeedLocation.s3) ?? .s3WithoutObject(text)
        } else if lowered.hasPrefix("http://") || lowered.hasPrefix("https://") {
            self = .http(text)
        } else {
            self = .file(text)
        }
    }

    /// True for a location read or written over the network.
    package var isRemote: Bool {
        if case .file = self { return false }
        return true
    }

    /// The scheme a remote location starts with (`s3://`), for messages; nil for a file.
    package var scheme: String? {
        switch self {
        case .file: nil
        case .http(let url): url.lowercased().hasPrefix("https://") ? "https://" : "http://"
        case .s3, .s3WithoutObject: "s3://"
        }
    }
}
