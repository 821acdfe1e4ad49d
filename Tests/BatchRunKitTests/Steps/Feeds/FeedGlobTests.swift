@testable import BatchRunFeeds
import Foundation
import Testing

/// Globs in `from:` (section 17): what a pattern matches, and the parts it lists on disk.
@Suite("feed globs")
struct FeedGlobTests {
    @Test("a text without a wildcard is not a glob")
    func plainPathsAreNotGlobs() {
        #expect(FeedGlob("data/flights.csv") == nil)
        #expect(FeedGlob("s3://feeds/2026/flights.csv.gz") == nil)
        #expect(FeedGlob("data/part-*.csv") != nil && FeedGlob("data/part-?.csv") != nil && FeedGlob("data/[ab].csv") != nil)
    }

    @Test("* and ? stay within a name, ** crosses folders, classes and their negation, dots literal",
          arguments: [
              ("data/part-*.csv.gz", "data/part-001.csv.gz", true),
              ("data/part-*.csv.gz", "data/sub/part-001.csv.gz", false),
              ("data/part-*.csv.gz", "data/part-001.csvXgz", false),
              ("data/part-?.csv", "data/part-7.csv", true),
              ("data/part-?.csv", "data/part-17.csv", false),
              ("data/**/part-*.csv", "data/part-1.csv", true),
              ("data/**/part-*.csv", "data/2026/11/part-1.csv", true),
              ("data/**", "data/a/b/c.csv", true),
              ("data/part-[0-4].csv", "data/part-3.csv", true),
              ("data/part-[0-4].csv", "data/part-5.csv", false),
              ("data/part-[!0-4].csv", "data/part-5.csv", true),
              ("data/part-[!0-4].csv", "data/part-3.csv", false),
              ("data/(x)+*.csv", "data/(x)+1.csv", true),
              ("data/*.csv", "data/.hidden.csv", false),
              ("**/*.csv", "data/.cache/a.csv", false),
          ])
    func matching(pattern: String, path: String, expected: Bool) throws {
        let glob = try #require(FeedGlob(pattern))
        #expect(glob.matches(path) == expected, "\(pattern) against \(path)")
    }

    @Test("many stars against a long name that almost matches end at once (no backtracking), and a class may hold ]")
    func manyStars() throws {
        let glob = try #require(FeedGlob("data/" + String(repeating: "*a", count: 12) + "*b"))
        let name = "data/" + String(repeating: "a", count: 250)
        #expect(!glob.matches(name))
        #expect(glob.matches(name + "b"))
        #expect(try #require(FeedGlob("data/[]x].csv")).matches("data/].csv"))
        #expect(try #require(FeedGlob("data/[.csv")).matches("data/[.csv"))
    }

    @Test("the literal prefix is what comes before the first wildcard (an S3 listing's Prefix)")
    func literalPrefix() {
        #expect(FeedGlob("exports/2026-11-28/part-*.csv.gz")?.literalPrefix == "exports/2026-11-28/part-")
        #expect(FeedGlob("**/*.csv")?.literalPrefix == "")
    }

    @Test("S3 keys kept in byte order, as ListObjectsV2 returns them")
    func filterKeepsByteOrder() throws {
        let glob = try #require(FeedGlob("p/*.csv"))
        #expect(glob.filter(["p/b.csv", "p/B.csv", "p/a.csv", "p/a.txt", "q/a.csv"]) == ["p/B.csv", "p/a.csv", "p/b.csv"])
    }

    @Test("parts on disk: files only, in name order, hidden ones and links to folders left out, relative stays relative")
    func localParts() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("feedglob-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: base) }
        for path in ["data/part-2.csv", "data/part-10.csv", "data/part-1.csv", "data/.part-0.csv", "data/notes.txt",
                     "data/2026/part-3.csv", "data/2026/11/part-4.csv", "data/.cache/part-5.csv"] {
            try FileManager.default.createDirectory(atPath: base + "/" + (path as NSString).deletingLastPathComponent,
                                                    withIntermediateDirectories: true)
            try Data("id\n1\n".utf8).write(to: URL(fileURLWithPath: base + "/" + path))
        }
        try FileManager.default.createDirectory(atPath: base + "/data/part-dir.csv", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: base + "/data/loop", withDestinationPath: base + "/data")
        let flat = try #require(FeedGlob("data/part-*.csv"))
        #expect(try flat.localParts(relativeTo: base) == ["data/part-1.csv", "data/part-10.csv", "data/part-2.csv"])
        let deep = try #require(FeedGlob("data/**/part-*.csv"))
        #expect(try deep.localParts(relativeTo: base) == ["data/2026/11/part-4.csv", "data/2026/part-3.csv",
                                                          "data/part-1.csv", "data/part-10.csv", "data/part-2.csv"])
        let absolute = try #require(FeedGlob(base + "/data/part-?.csv"))
        #expect(try absolute.localParts(relativeTo: nil) == [base + "/data/part-1.csv", base + "/data/part-2.csv"])
        #expect(try #require(FeedGlob("data/none-*.csv")).localParts(relativeTo: base).isEmpty)
        #expect(throws: (any Error).self) { try #require(FeedGlob("missing/*.csv")).localParts(relativeTo: base) }
    }
}
