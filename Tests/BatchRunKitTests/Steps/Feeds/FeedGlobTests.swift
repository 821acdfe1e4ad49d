@testable import BatchRunFeeds
import BatchRunStore
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
              ("data/**/part-*.csv", "data/xpart-1.csv", false),
              ("data/**/part-*.csv", "data/old/counterpart-1.csv", false),
              ("**/*.csv", "a.csv", true),
              ("**/*.csv", "a/b/c.csv", true),
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
        // A dot in the pattern's own folders is no hidden part.
        let hiddenFolder = try #require(FeedGlob("data/.cache/part-*.csv"))
        #expect(try hiddenFolder.localParts(relativeTo: base) == ["data/.cache/part-5.csv"])
        let absolute = try #require(FeedGlob(base + "/data/part-?.csv"))
        #expect(try absolute.localParts(relativeTo: nil) == [base + "/data/part-1.csv", base + "/data/part-2.csv"])
        #expect(try #require(FeedGlob("data/none-*.csv")).localParts(relativeTo: base).isEmpty)
        #expect(throws: (any Error).self) { try #require(FeedGlob("missing/*.csv")).localParts(relativeTo: base) }
    }
}

/// A glob's parts with what a resumed run compares (section 17), and an S3 listing's answer read.
@Suite("feed parts")
struct FeedPartsTests {
    @Test("local parts: absolute names in name order with their sizes; none matching names the pattern and the folder; a link out of the roots refused")
    func localParts() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("feedparts-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: base) }
        try FileManager.default.createDirectory(atPath: base + "/data", withIntermediateDirectories: true)
        try Data("id\n1\n".utf8).write(to: URL(fileURLWithPath: base + "/data/part-2.csv"))
        try Data("id\n1\n2\n".utf8).write(to: URL(fileURLWithPath: base + "/data/part-1.csv"))
        // The rows a run rejected from a part are no part of the next run.
        try Data("line,reason\n".utf8).write(to: URL(fileURLWithPath: base + "/data/part-1.rejected.csv"))
        try Data("line,reason\n".utf8).write(to: URL(fileURLWithPath: base + "/data/part-2.rejected.csv.partial"))
        let parts = try FeedParts.local(try #require(FeedGlob(base + "/data/part-*.csv")), confinement: nil)
        #expect(parts.map(\.name) == [base + "/data/part-1.csv", base + "/data/part-2.csv"])
        #expect(parts.map(\.size) == [7, 5])
        #expect(parts.allSatisfy { $0.modified > 0 && $0.etag == nil })

        #expect(throws: FeedGlobError.noMatch(pattern: base + "/data/none-*.csv", lookedIn: base + "/data/")) {
            try FeedParts.local(try #require(FeedGlob(base + "/data/none-*.csv")), confinement: nil)
        }
        let error = #expect(throws: FeedError.self) { try FeedParts.list(pattern: base + "/data/none-*.csv", remote: nil, confinement: nil) }
        #expect(error?.message.contains("no feed part matches \(base)/data/none-*.csv") == true, "\(String(describing: error))")

        // A part that is a link to a file outside the worker's roots is refused, not skipped.
        let outside = base + "-outside.csv"
        try Data("id\n9\n".utf8).write(to: URL(fileURLWithPath: outside))
        defer { try? FileManager.default.removeItem(atPath: outside) }
        try FileManager.default.createSymbolicLink(atPath: base + "/data/part-3.csv", withDestinationPath: outside)
        let confinement = try PathConfinement(roots: [base])
        #expect(throws: PathConfinementError.self) {
            try FeedParts.local(try #require(FeedGlob(base + "/data/part-*.csv")), confinement: confinement)
        }
    }

    @Test("a part changed since it was listed: another size, another time, gone; the same part is unchanged")
    func changes() throws {
        let part = FeedPart(name: "/x/part-1.csv", size: 10, modified: 1_000)
        #expect(part.changes(now: part) == nil)
        #expect(part.changes(now: FeedPart(name: part.name, size: 11, modified: 1_000))?.contains("size was 10 bytes, it is 11") == true)
        #expect(part.changes(now: FeedPart(name: part.name, size: 10, modified: 1_001)) == "it was modified since")
        #expect(part.changes(now: nil) == "it is gone")
        let object = FeedPart(name: "s3://b/k", size: 10, etag: "\"a\"")
        #expect(object.changes(now: FeedPart(name: "s3://b/k", size: 10, etag: "\"b\""))?.contains("ETag") == true)
    }

    @Test("a walk that reads more entries than its limit stops, naming the folder")
    func walkLimit() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("feedwalk-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: base) }
        for index in 0..<30 {
            try FileManager.default.createDirectory(atPath: base + "/d\(index)", withIntermediateDirectories: true)
        }
        let glob = try #require(FeedGlob(base + "/**/*.csv"))
        #expect(throws: FeedGlobError.tooManyEntries(folder: base + "/", limit: 20)) { try glob.localParts(relativeTo: nil, limit: 20) }
        #expect(try glob.localParts(relativeTo: nil, limit: 100).isEmpty)
    }

    #if NetworkFeeds
    @Test("a ListObjectsV2 answer: each object's key (entities decoded), size and ETag")
    func listingAnswer() {
        let body = """
            <?xml version="1.0" encoding="UTF-8"?><ListBucketResult><Name>feeds</Name><Prefix>in/</Prefix><KeyCount>2</KeyCount>\
            <IsTruncated>true</IsTruncated><NextContinuationToken>abc</NextContinuationToken>\
            <Contents><Key>in/a&amp;b.csv</Key><LastModified>2026-11-28T00:00:00.000Z</LastModified><ETag>&quot;e1&quot;</ETag><Size>12</Size></Contents>\
            <Contents><Key>in/c.csv</Key><ETag>"e2"</ETag><Size>7</Size><StorageClass>STANDARD</StorageClass></Contents></ListBucketResult>
            """
        let objects = S3Listing.objects(in: body)
        #expect(objects.map(\.key) == ["in/a&b.csv", "in/c.csv"])
        // With encoding-type=url the keys are percent-encoded (a key may hold what XML cannot).
        let encoded = S3Listing.objects(in: body.replacingOccurrences(of: "<Prefix>", with: "<EncodingType>url</EncodingType><Prefix>")
            .replacingOccurrences(of: "in/c.csv", with: "in/c%0D%20d.csv"))
        #expect(encoded.map(\.key) == ["in/a&b.csv", "in/c\r d.csv"])
        #expect(objects.map(\.size) == [12, 7])
        #expect(objects.map(\.etag) == ["\"e1\"", "\"e2\""])
    }
    #endif
}
