#if NetworkFeeds
import Foundation
import Testing
@testable import BatchRunKit

/// The SigV4 signer against AWS's published test suite and against botocore's S3 signatures
/// (`Fixtures/sigv4/README.md` names both sources).
@Suite("SigV4 signer")
struct SigV4SignerTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/sigv4")

    static let suiteCases = [
        "get-vanilla", "get-vanilla-query-order-encoded", "get-vanilla-with-session-token", "get-unreserved",
        "get-header-value-trim", "post-vanilla", "post-header-key-sort", "post-vanilla-empty-query-value",
        "post-x-www-form-urlencoded",
    ]

    /// One case of the AWS suite: its request parsed, signed at its time with its key; the
    /// canonical request, string to sign and signature are those published.
    @Test("AWS SigV4 test suite", arguments: suiteCases)
    func awsTestSuite(name: String) throws {
        let folder = Self.fixtures.appendingPathComponent("aws-sig-v4-test-suite/\(name)")
        func file(_ name: String) throws -> String { try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8) }
        let context = try JSONSerialization.jsonObject(with: Data(file("context.json").utf8)) as! [String: Any]
        let keys = context["credentials"] as! [String: String]
        let credentials = AWSCredentials(accessKeyID: keys["access_key_id"]!, secretAccessKey: keys["secret_access_key"]!,
                                         sessionToken: keys["token"])
        let signsBody = context["sign_body"] as! Bool
        let signer = SigV4Signer(credentials: credentials, region: context["region"] as! String,
                                 service: context["service"] as! String, sendsContentHash: signsBody)
        let date = try #require(ISO8601DateFormatter().date(from: context["timestamp"] as! String))

        // request.txt: "METHOD TARGET HTTP/1.1", headers "Name:value", a blank line, the body.
        let text = try file("request.txt")
        let (head, body) = text.range(of: "\n\n").map { (String(text[..<$0.lowerBound]), String(text[$0.upperBound...])) } ?? (text, "")
        var lines = head.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let requestLine = lines.removeFirst().split(separator: " ").map(String.init)
        var host = ""
        var headers: [(name: String, value: String)] = []
        for line in lines where !line.isEmpty {
            let colon = try #require(line.firstIndex(of: ":"))
            let name = String(line[..<colon]), value = String(line[line.index(after: colon)...])
            if name.lowercased() == "host" { host = value } else { headers.append((name, value)) }
        }
        let target = requestLine[1]
        let path = String(target.prefix { $0 != "?" })
        let query: [(name: String, value: String)] = target.contains("?")
            ? target.split(separator: "?", maxSplits: 1)[1].split(separator: "&").map { pair in
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map { String($0).removingPercentEncoding! }
                return (parts[0], parts.count > 1 ? parts[1] : "")
            }
            : []
        let request = SigV4Signer.Request(method: requestLine[0], host: host, path: path.removingPercentEncoding!, query: query, headers: headers)
        let payload: SigV4Signer.Payload = body.isEmpty ? .empty : .hash(SigV4Signer.hash(Data(body.utf8)))
        let signature = signer.signature(for: request, payload: payload, date: date)

        #expect(signature.canonicalRequest == (try file("header-canonical-request.txt")))
        #expect(signature.stringToSign == (try file("header-string-to-sign.txt")))
        #expect(signature.signature == (try file("header-signature.txt")).trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(signature.authorization.hasSuffix("Signature=\(signature.signature)"))
    }

    struct BotocoreVector: Decodable, CustomTestStringConvertible {
        var name: String
        var access_key_id: String
        var secret_access_key: String
        var session_token: String?
        var region: String
        var method: String
        var host: String
        var path: String
        var query: [[String]]
        var headers: [[String]]
        var body_sha256: String?
        var unsigned: Bool
        var timestamp: String
        var target: String
        var canonical_request: String
        var x_amz_content_sha256: String
        var authorization: String

        var testDescription: String { name }
    }

    static let botocoreVectors: [BotocoreVector] = {
        struct File: Decodable { var vectors: [BotocoreVector] }
        let data = (try? Data(contentsOf: SigV4SignerTests.fixtures.appendingPathComponent("botocore-s3.json"))) ?? Data()
        return (try? JSONDecoder().decode(File.self, from: data).vectors) ?? []
    }()

    @Test("botocore's vectors are there")
    func botocoreVectorsLoad() {
        #expect(Self.botocoreVectors.count == 10)
    }

    /// S3 requests signed as botocore signed them: the same target on the wire, canonical
    /// request, `x-amz-content-sha256` and `Authorization` header.
    @Test("S3 requests signed as botocore signs them", arguments: botocoreVectors)
    func botocore(vector: BotocoreVector) throws {
        let credentials = AWSCredentials(accessKeyID: vector.access_key_id, secretAccessKey: vector.secret_access_key,
                                         sessionToken: vector.session_token)
        let signer = SigV4Signer(credentials: credentials, region: vector.region)
        let request = SigV4Signer.Request(method: vector.method, host: vector.host, path: vector.path,
                                          query: vector.query.map { ($0[0], $0[1]) },
                                          headers: vector.headers.map { ($0[0], $0[1]) })
        let payload: SigV4Signer.Payload = vector.unsigned ? .unsigned : vector.body_sha256.map { .hash($0) } ?? .empty
        let date = try #require(ISO8601DateFormatter().date(from: vector.timestamp))
        let signature = signer.signature(for: request, payload: payload, date: date)

        #expect(request.target == vector.target)
        #expect(signature.canonicalRequest == vector.canonical_request)
        #expect(signature.authorization == vector.authorization)
        let headers = signer.signedHeaders(for: request, payload: payload, date: date)
        #expect(headers.first { $0.name == "x-amz-content-sha256" }?.value == vector.x_amz_content_sha256)
        #expect(headers.first { $0.name == "x-amz-security-token" }?.value == vector.session_token)
        #expect(headers.last?.name == "authorization")
    }

    /// The payload hash of a part is SHA-256 over its bytes; a secret never shows in a description.
    @Test("hashes and descriptions")
    func hashesAndDescriptions() {
        #expect(SigV4Signer.hash(Data()) == SigV4Signer.emptyHash)
        #expect(SigV4Signer.hash(Data("x".utf8)) == "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881")
        let credentials = AWSCredentials(accessKeyID: "AKID", secretAccessKey: "very-secret", sessionToken: "token-secret")
        #expect(!"\(credentials)".contains("secret\""))
        #expect(!"\(credentials)".contains("very-secret"))
        #expect(!"\(credentials)".contains("token-secret"))
        #expect(SigV4Signer.timestamp(Date(timeIntervalSince1970: 1_440_938_160)) == "20150830T123600Z")
    }
}
#endif
