/// The version of batchrun and BatchRunKit, as `batchrun --version` and the reports' footers
/// print it.
///
/// ```swift
/// print("batchrun \(BatchRunVersion.current)")   // batchrun 0.1.0
/// ```
package enum BatchRunVersion {
    package static let current = "0.1.0"
}
