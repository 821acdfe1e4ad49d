import BatchRunKit

/// What `batchrun --version` prints: the version (from `git describe` when it was built, in the
/// form its Debian package takes), the commit, and the traits it was built with.
///
/// ```
/// $ batchrun --version
/// batchrun 0.1.0+3.g2976f97
/// commit 2976f974e2638a039acb619cac854f348977b3e0
/// traits NetworkFeeds PostgreSQL
/// ```
enum VersionText {
    static let text = """
        batchrun \(BatchRunVersion.version(describe: BuildInfo.describe))
        commit \(BuildInfo.commit)
        traits \(traits.isEmpty ? "(none)" : traits.joined(separator: " "))
        """

    /// The package traits this binary was compiled with (Package.swift).
    static var traits: [String] {
        var traits: [String] = []
        #if NetworkFeeds
        traits.append("NetworkFeeds")
        #endif
        #if PostgreSQL
        traits.append("PostgreSQL")
        #endif
        return traits
    }
}
