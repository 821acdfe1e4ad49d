#if NetworkFeeds
import Foundation
import Testing
@testable import BatchRunKit

/// Credentials, region and endpoint found as the AWS tools find them, from real files in a
/// temporary home folder.
@Suite("S3 configuration")
struct S3ConfigurationTests {
    /// A home folder with `~/.aws/credentials` and `~/.aws/config` as given.
    final class Home {
        let path: String

        init(credentials: String? = nil, config: String? = nil) throws {
            path = FileManager.default.temporaryDirectory.appendingPathComponent("aws-home-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: path + "/.aws", withIntermediateDirectories: true)
            if let credentials { try credentials.write(toFile: path + "/.aws/credentials", atomically: true, encoding: .utf8) }
            if let config { try config.write(toFile: path + "/.aws/config", atomically: true, encoding: .utf8) }
        }

        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    static let credentialsFile = """
        [default]
        aws_access_key_id = AKIDDEFAULT
        aws_secret_access_key = default/secret

        # a comment
        [nightly]
        aws_access_key_id=AKIDNIGHTLY
        aws_secret_access_key=nightly+secret
        aws_session_token = nightly-token
        """

    static let configFile = """
        [default]
        region = eu-west-3

        [profile nightly]
        region = ap-southeast-2
        endpoint_url = http://minio.internal:9000
        s3 =
          addressing_style = path

        [profile only-config]
        aws_access_key_id = AKIDCONFIG
        aws_secret_access_key = config-secret
        """

    @Test("the environment's keys come first, then the profile's")
    func credentialOrder() throws {
        let home = try Home(credentials: Self.credentialsFile, config: Self.configFile)
        let fromEnvironment = try S3Configuration(environment: ["AWS_ACCESS_KEY_ID": "AKIDENV", "AWS_SECRET_ACCESS_KEY": "env-secret",
                                                                "AWS_SESSION_TOKEN": "env-token", "AWS_PROFILE": "nightly"], home: home.path)
        #expect(fromEnvironment.credentials == AWSCredentials(accessKeyID: "AKIDENV", secretAccessKey: "env-secret", sessionToken: "env-token"))

        let byDefault = try S3Configuration(environment: [:], home: home.path)
        #expect(byDefault.credentials == AWSCredentials(accessKeyID: "AKIDDEFAULT", secretAccessKey: "default/secret"))
        #expect(byDefault.region == "eu-west-3")
        #expect(byDefault.endpoint == nil)

        let nightly = try S3Configuration(environment: ["AWS_PROFILE": "nightly"], home: home.path)
        #expect(nightly.credentials == AWSCredentials(accessKeyID: "AKIDNIGHTLY", secretAccessKey: "nightly+secret", sessionToken: "nightly-token"))
        #expect(nightly.region == "ap-southeast-2")
        #expect(nightly.endpoint == S3Address(scheme: "http", host: "minio.internal:9000", path: ""))

        let onlyConfig = try S3Configuration(environment: ["AWS_DEFAULT_PROFILE": "only-config"], home: home.path)
        #expect(onlyConfig.credentials.accessKeyID == "AKIDCONFIG")
        #expect(onlyConfig.region == "us-east-1")
    }

    @Test("AWS_SHARED_CREDENTIALS_FILE and AWS_CONFIG_FILE name other files")
    func otherFiles() throws {
        let home = try Home()
        try Self.credentialsFile.write(toFile: home.path + "/creds", atomically: true, encoding: .utf8)
        try Self.configFile.write(toFile: home.path + "/conf", atomically: true, encoding: .utf8)
        let configuration = try S3Configuration(environment: ["AWS_SHARED_CREDENTIALS_FILE": home.path + "/creds",
                                                              "AWS_CONFIG_FILE": home.path + "/conf", "AWS_PROFILE": "nightly"],
                                                home: home.path)
        #expect(configuration.credentials.accessKeyID == "AKIDNIGHTLY")
        #expect(configuration.region == "ap-southeast-2")
    }

    @Test("region: AWS_REGION, then AWS_DEFAULT_REGION, then the profile")
    func regionOrder() throws {
        let home = try Home(credentials: Self.credentialsFile, config: Self.configFile)
        #expect(try S3Configuration(environment: ["AWS_REGION": "us-west-1", "AWS_DEFAULT_REGION": "us-west-2"], home: home.path).region == "us-west-1")
        #expect(try S3Configuration(environment: ["AWS_DEFAULT_REGION": "us-west-2"], home: home.path).region == "us-west-2")
        #expect(try S3Configuration(environment: ["AWS_REGION": ""], home: home.path).region == "eu-west-3")
    }

    @Test("endpoint: AWS_ENDPOINT_URL_S3, then AWS_ENDPOINT_URL, path-style; else AWS, virtual-hosted")
    func endpoints() throws {
        let home = try Home(credentials: Self.credentialsFile)
        let location = try #require(S3Location(url: "s3://feeds/2026/day one/flights.csv.gz"))
        #expect(location.bucket == "feeds")
        #expect(location.key == "2026/day one/flights.csv.gz")

        let both = try S3Configuration(environment: ["AWS_ENDPOINT_URL_S3": "http://127.0.0.1:9000", "AWS_ENDPOINT_URL": "http://other:1"], home: home.path)
        #expect(both.address(of: location) == S3Address(scheme: "http", host: "127.0.0.1:9000", path: "/feeds/2026/day one/flights.csv.gz"))
        let general = try S3Configuration(environment: ["AWS_ENDPOINT_URL": "https://r2.example.com/"], home: home.path)
        #expect(general.address(of: location) == S3Address(scheme: "https", host: "r2.example.com", path: "/feeds/2026/day one/flights.csv.gz"))
        let aws = try S3Configuration(environment: ["AWS_REGION": "eu-central-1"], home: home.path)
        #expect(aws.address(of: location) == S3Address(scheme: "https", host: "feeds.s3.eu-central-1.amazonaws.com", path: "/2026/day one/flights.csv.gz"))
        let ignored = try S3Configuration(environment: ["AWS_ENDPOINT_URL": "http://x:1", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS": "true"], home: home.path)
        #expect(ignored.endpoint == nil)
    }

    @Test("what is missing or wrong is an error saying what to set, never a secret")
    func errors() throws {
        let empty = try Home()
        func message(_ environment: [String: String]) -> String {
            let error = #expect(throws: S3Error.self) { try S3Configuration(environment: environment, home: empty.path) }
            return error?.message ?? ""
        }
        let none = message([:])
        #expect(none.contains("no AWS credentials") && none.contains("AWS_ACCESS_KEY_ID"), "\(none)")
        #expect(message(["AWS_ACCESS_KEY_ID": "AKID"]).contains("AWS_SECRET_ACCESS_KEY is not"))
        #expect(message(["AWS_PROFILE": "missing", "AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "s"]).contains("profile \"missing\""))
        let endpoint = message(["AWS_ENDPOINT_URL": "ftp://x", "AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "top-secret"])
        #expect(endpoint.contains("AWS_ENDPOINT_URL is not an http") && !endpoint.contains("top-secret"), "\(endpoint)")
    }

    @Test("s3:// URLs need a bucket and a key")
    func locations() {
        #expect(S3Location(url: "s3://bucket") == nil)
        #expect(S3Location(url: "s3:///key") == nil)
        #expect(S3Location(url: "s3://bucket/") == nil)
        #expect(S3Location(url: "https://bucket/key") == nil)
        #expect(S3Location(url: "S3://b/k/with/slashes")?.key == "k/with/slashes")
        // A bucket's name becomes part of a host name: nothing in it may make another host.
        for url in ["s3://attacker.example#/x.csv", "s3://u@evil/x", "s3://evil:9/x", "s3://a?b/x", "s3://a b/x", "s3://\(String(repeating: "a", count: 64))/x"] {
            #expect(S3Location(url: url) == nil, "\(url)")
        }
        #expect(S3Location(url: "s3://my-bucket.v2_old/k")?.bucket == "my-bucket.v2_old")
    }

    @Test("a feed location is read once: a file, an http(s) URL, an S3 object, or an s3:// URL naming none")
    func feedLocations() throws {
        #expect(FeedLocation("data/flights.csv") == .file("data/flights.csv"))
        #expect(FeedLocation("/srv/https://odd-name.csv") == .file("/srv/https://odd-name.csv"))
        #expect(FeedLocation("HTTPS://example.com/a.csv?sig=x") == .http("HTTPS://example.com/a.csv?sig=x"))
        #expect(FeedLocation("s3://feeds/2026/a.csv.gz") == .s3(try #require(S3Location(url: "s3://feeds/2026/a.csv.gz"))))
        #expect(FeedLocation("s3://feeds") == .s3WithoutObject("s3://feeds"))
        #expect([FeedLocation("a.csv"), FeedLocation("http://h/a"), FeedLocation("https://h/a"), FeedLocation("s3://b/k"), FeedLocation("s3://b")]
            .map(\.scheme) == [nil, "http://", "https://", "s3://", "s3://"])
        #expect(!FeedLocation("a.csv").isRemote && FeedLocation("s3://b").isRemote)
    }
}
#endif
