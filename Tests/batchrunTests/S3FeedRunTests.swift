import Foundation
import Testing
import TestSupport

/// `s3://` feeds (section 14) imported by the real binary from moto (`MotoServer`, an
/// S3-compatible endpoint with authentication on): plain and gzip feeds give the tables the
/// local files give; a missing key and a wrong secret fail naming the bucket, the key and S3's
/// error code, with no secret anywhere; an object changed since a killed run is refused by
/// `--resume` (exit 2, store untouched).
@Suite("S3 feeds, end to end", .serialized)
struct S3FeedRunTests {
    /// The feeds of `CompressedFeedRunTests` ending in `suffix`, put in a new bucket; the folder and the bucket.
    static func uploaded(_ moto: MotoServer, suffix: String) throws -> (TemporaryFolder, String) {
        let folder = try TemporaryFolder()
        try CompressedFeedRunTests.prepareFeeds(folder)
        let bucket = try moto.bucket("feeds")
        for format in CompressedFeedRunTests.formats {
            let name = "\(format)-feed.\(format)\(suffix)"
            try moto.put(bucket: bucket, key: "in/\(name)", file: folder.path("data/\(name)"))
        }
        return (folder, bucket)
    }

    /// `FeedJobs.bigFeed` in a new folder, its `data/big.csv` put as `big.csv` in a new bucket; the folder and the bucket.
    static func bigFeedUploaded(_ moto: MotoServer, bucket prefix: String) throws -> (TemporaryFolder, String) {
        let folder = try TemporaryFolder()
        try FeedJobs.bigFeed(folder)
        let bucket = try moto.bucket(prefix)
        try moto.put(bucket: bucket, key: "big.csv", file: folder.path("data/big.csv"))
        return (folder, bucket)
    }

    @Test("every format from S3, plain and .gz, gives the tables the local files give", arguments: ["", ".gz"])
    func sameTables(suffix: String) throws {
        let moto = try MotoServer.shared
        let expected = try CompressedFeedRunTests.reference()
        let (folder, bucket) = try Self.uploaded(moto, suffix: suffix)
        try FileManager.default.removeItem(atPath: folder.path("data"))
        try folder.write("job.yaml", HTTPFeedRunTests.jobFile(base: "s3://\(bucket)/in", suffix: suffix))
        let result = try Batchrun.run(["job.yaml", "--quiet"], in: folder.url, environment: moto.environment)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try CompressedFeedRunTests.tables(folder) == expected)
    }

    @Test("a missing key fails the job naming the bucket, the key and NoSuchKey")
    func missingKey() throws {
        let moto = try MotoServer.shared
        let folder = try TemporaryFolder()
        let bucket = try moto.bucket("missing")
        try folder.write("job.yaml", FeedJobs.singleFeed("s3://\(bucket)/in/absent.csv"))
        let result = try Batchrun.run(["job.yaml"], in: folder.url, environment: moto.environment)
        #expect(result.status == 1)
        let output = result.stdout + result.stderr
        #expect(output.contains("bucket \"\(bucket)\"") && output.contains("key \"in/absent.csv\"") && output.contains("NoSuchKey"),
                "\(output)")
    }

    @Test("a wrong secret fails naming SignatureDoesNotMatch; the secret is nowhere: output, report, run state")
    func wrongSecret() throws {
        let moto = try MotoServer.shared
        let (folder, bucket) = try Self.uploaded(moto, suffix: "")
        let secret = "WrongSecretKeyForBatchrunTests0123456789"
        var environment = moto.environment
        environment["AWS_SECRET_ACCESS_KEY"] = secret
        try folder.write("job.yaml", FeedJobs.singleFeed("s3://\(bucket)/in/csv-feed.csv"))
        let result = try Batchrun.run(["job.yaml", "--report", "report.json"], in: folder.url, environment: environment)
        #expect(result.status == 1)
        let output = result.stdout + result.stderr
        #expect(output.contains("SignatureDoesNotMatch") && output.contains("bucket \"\(bucket)\""), "\(output)")
        let report = try String(contentsOfFile: folder.path("report.json"), encoding: .utf8)
        #expect(report.contains("SignatureDoesNotMatch"), "\(report)")
        for text in [output, report] {
            #expect(!text.contains(secret) && !text.contains(moto.secretAccessKey))
        }
        // The run state (store.sqlite and its journal files) holds no secret either.
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.url.path).filter { $0.hasPrefix("store.sqlite") }
        #expect(!files.isEmpty)
        for file in files {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: folder.path(file)))
            #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(file) holds the secret")
        }
    }

    @Test("--resume after the object changed: exit 2 naming the feed, the store untouched")
    func changedObjectRefused() throws {
        let moto = try MotoServer.shared
        let (folder, bucket) = try Self.bigFeedUploaded(moto, bucket: "changed")
        try FeedJobs.changedFeedRefused("s3://\(bucket)/big.csv", named: "s3://\(bucket)/big.csv", in: folder,
                                        environment: moto.environment) {
            try moto.put(bucket: bucket, key: "big.csv", file: folder.path("data/big.csv"))
        }
    }
}

/// S3 feeds read through `BreakingTCPProxy` (between batchrun and moto, with authentication
/// on): a transfer cut mid-body and a killed import are both taken up with a `Range` request
/// signed anew, which moto accepts, and every row is imported exactly once.
extension S3FeedRunTests {
    /// moto's environment with S3's requests sent to `proxy` (`AWS_ENDPOINT_URL_S3` before `AWS_ENDPOINT_URL`).
    static func environment(_ moto: MotoServer, through proxy: BreakingTCPProxy) -> [String: String] {
        var environment = moto.environment
        environment["AWS_ENDPOINT_URL_S3"] = proxy.endpoint
        return environment
    }

    /// The GETs of `key` the proxy forwarded.
    static func gets(_ proxy: BreakingTCPProxy, bucket: String, key: String) -> [BreakingTCPProxy.RequestHead] {
        proxy.requests.filter { $0.method == "GET" && $0.target.hasPrefix("/\(bucket)/\(key)") }
    }

    /// A signed request's `SignedHeaders`, from its `Authorization` header.
    static func signedHeaders(_ request: BreakingTCPProxy.RequestHead) -> [String] {
        guard let authorization = request.header("Authorization"),
              let range = authorization.range(of: "SignedHeaders=") else { return [] }
        return authorization[range.upperBound...].prefix { $0 != "," }.split(separator: ";").map(String.init)
    }

    @Test("an S3 transfer cut once mid-body is taken up with a signed Range: bytes=N- request moto accepts: each row exactly once",
          arguments: ["", ".gz"])
    func brokenOnce(suffix: String) throws {
        let moto = try MotoServer.shared
        let expected = try CompressedFeedRunTests.reference()["CsvRow"]
        let (folder, bucket) = try Self.uploaded(moto, suffix: suffix)
        let proxy = try BreakingTCPProxy(to: moto.endpoint)
        defer { proxy.stop() }
        let key = "in/csv-feed.csv\(suffix)"
        let size = try Data(contentsOf: URL(fileURLWithPath: folder.path("data/csv-feed.csv\(suffix)"))).count
        proxy.breakOnce(afterBytes: size / 3)
        try folder.write("job.yaml", FeedJobs.singleFeed("s3://\(bucket)/\(key)", batchSize: 500))
        let result = try Batchrun.run(["job.yaml", "--quiet"], in: folder.url, environment: Self.environment(moto, through: proxy))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try FeedJobs.csvRows(folder) == expected)
        #expect(proxy.broken == 1)
        // One GET of the whole object (the cut one; a probe for the object's identity asks
        // for bytes=0-0), then one retry from the byte the client had: at most what went
        // through before the cut, signed for the host it was sent to, its Range signed too.
        let gets = Self.gets(proxy, bucket: bucket, key: key)
        #expect(gets.filter { $0.range == nil }.count == 1, "\(gets)")
        let retries = gets.filter { ($0.rangeStart ?? 0) > 0 }
        #expect(retries.count == 1, "\(gets)")
        let retry = try #require(retries.last)
        let start = try #require(retry.rangeStart)
        #expect(start <= size / 3 && retry.header("If-Range") != nil, "\(gets)")
        #expect(retry.header("Host") == "127.0.0.1:\(proxy.port)", "\(retry.headers)")
        #expect(Set(Self.signedHeaders(retry)).isSuperset(of: ["host", "range", "x-amz-date"]), "\(retry.headers)")
    }

    @Test("kill -9 mid-import of an s3:// feed, then --resume: a signed Range: bytes=N- request from the checkpoint; each row exactly once")
    func killedAndResumed() throws {
        let moto = try MotoServer.shared
        let (folder, bucket) = try Self.bigFeedUploaded(moto, bucket: "resumed")
        let proxy = try BreakingTCPProxy(to: moto.endpoint)
        defer { proxy.stop() }
        let seen = try FeedJobs.killAndResume("s3://\(bucket)/big.csv", in: folder,
                                              environment: Self.environment(moto, through: proxy)) { proxy.requests.count }
        // Only what is left is downloaded: a signed Range from the checkpoint's byte, past the first 30,000 rows.
        let resumed = Array(proxy.requests.dropFirst(seen))
        let ranged = resumed.filter { ($0.rangeStart ?? 0) > 500_000 }
        #expect(!ranged.isEmpty, "\(resumed)")
        #expect(ranged.allSatisfy { Self.signedHeaders($0).contains("range") && $0.header("Host") == "127.0.0.1:\(proxy.port)" },
                "\(ranged.map(\.headers))")
    }
}

extension S3FeedRunTests {
    @Test("the README's S3 example runs against moto with AWS_ENDPOINT_URL_S3 and imports what the local file holds")
    func readmeExample() throws {
        let moto = try MotoServer.shared
        let example = try ReadmeExample(after: "**Feeds from S3.**")
        #expect(example.yaml.contains("from: s3://exports/sessions.csv.gz"))
        #expect(example.shell.contains("AWS_ENDPOINT_URL_S3=") && example.shell.contains("s3://exports/"))
        let folder = try TemporaryFolder()
        try folder.copyFromPackage("examples")
        let bucket = try moto.bucket("readme")
        try moto.put(bucket: bucket, key: "sessions.csv.gz", file: folder.path("examples/data/sessions.csv.gz"))
        try folder.write("import_s3.yaml", example.yaml.replacingOccurrences(of: "s3://exports/", with: "s3://\(bucket)/"))
        // The endpoint as the README sets it: AWS_ENDPOINT_URL_S3 alone.
        var environment = moto.environment
        environment["AWS_ENDPOINT_URL"] = ""
        environment["AWS_ENDPOINT_URL_S3"] = moto.endpoint
        let result = try Batchrun.run(["import_s3.yaml"], in: folder.url, environment: environment)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let (fromS3, local) = try example.sessions(in: folder, feed: "s3://exports/sessions.csv.gz", store: "var/s3.sqlite",
                                                   local: "examples/data/sessions.csv.gz")
        #expect(fromS3 == local && !fromS3.isEmpty, "\(fromS3.count) rows from S3, \(local.count) from the file")
    }
}
