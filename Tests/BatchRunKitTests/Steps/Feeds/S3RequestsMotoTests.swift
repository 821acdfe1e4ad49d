#if NetworkFeeds
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TestSupport
@testable import BatchRunKit

/// Requests signed by `SigV4Signer` (through `S3Requests`) against a real S3-compatible endpoint
/// with authentication on (moto, `MotoServer`): objects that boto3 put come back, whole and by
/// range; a wrong secret, a user without rights and a missing key are errors naming the bucket,
/// the key and S3's error code, and no secret.
@Suite("S3 requests against moto", .serialized)
struct S3RequestsMotoTests {
    /// One request sent with URLSession; status, body, headers.
    static func send(_ signed: (url: String, headers: [(name: String, value: String)]), method: String = "GET") throws
        -> (status: Int, body: Data, headers: [String: String]) {
        var request = URLRequest(url: try #require(URL(string: signed.url)))
        request.httpMethod = method
        for header in signed.headers { request.setValue(header.value, forHTTPHeaderField: header.name) }
        let done = DispatchSemaphore(value: 0)
        let box = Box()
        URLSession.shared.dataTask(with: request) { data, response, error in
            box.set(data, response as? HTTPURLResponse, error)
            done.signal()
        }.resume()
        done.wait()
        let (data, response, error) = box.get()
        if let error { throw error }
        let http = try #require(response)
        var headers: [String: String] = [:]
        for (key, value) in http.allHeaderFields { headers["\(key)".lowercased()] = "\(value)" }
        return (http.statusCode, data ?? Data(), headers)
    }

    final class Box: @unchecked Sendable {
        // Safety: `set` runs once on URLSession's queue before the semaphore is signalled, `get`
        // after the waiting thread was woken by it: the two never overlap.
        private var value: (Data?, HTTPURLResponse?, (any Error)?) = (nil, nil, nil)
        func set(_ data: Data?, _ response: HTTPURLResponse?, _ error: (any Error)?) { value = (data, response, error) }
        func get() -> (Data?, HTTPURLResponse?, (any Error)?) { value }
    }

    static func requests(_ moto: MotoServer, bucket: String, key: String, secret: String? = nil, keyID: String? = nil) throws -> S3Requests {
        var environment = moto.environment
        if let secret { environment["AWS_SECRET_ACCESS_KEY"] = secret }
        if let keyID { environment["AWS_ACCESS_KEY_ID"] = keyID }
        return S3Requests(configuration: try S3Configuration(environment: environment), location: try #require(S3Location(url: "s3://\(bucket)/\(key)")))
    }

    @Test("an object boto3 put comes back, whole and from a byte on, under a key needing encoding")
    func getObject() throws {
        let moto = try MotoServer.shared
        let bucket = try moto.bucket("get")
        // A space and ~ only: moto 5.2.1 itself miscomputes the signature of keys with é, +, = or
        // parentheses (boto3's own PUT of them is refused); botocore's vectors cover those.
        let key = "feeds/2026/day one/x_y~z.csv"
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("s3-\(UUID().uuidString).csv").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        let text = "id,name\n" + (1...2000).map { "\($0),n\($0)\n" }.joined()
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        try moto.put(bucket: bucket, key: key, file: file)

        let requests = try Self.requests(moto, bucket: bucket, key: key)
        let whole = try Self.send(requests.signed(method: "GET"))
        #expect(whole.status == 200)
        #expect(String(decoding: whole.body, as: UTF8.self) == text)
        #expect(whole.headers["etag"] != nil)

        let ranged = try Self.send(requests.signed(method: "GET", headers: [("Range", "bytes=100-")]))
        #expect(ranged.status == 206)
        #expect(ranged.body == Data(text.utf8).dropFirst(100))
        #expect(ranged.headers["content-range"] == "bytes 100-\(text.utf8.count - 1)/\(text.utf8.count)")
    }

    @Test("a missing key, a wrong secret, a user without rights: S3's code with bucket and key, no secret")
    func errors() throws {
        let moto = try MotoServer.shared
        let bucket = try moto.bucket("errors")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("s3-\(UUID().uuidString).csv").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        try "a\n1\n".write(toFile: file, atomically: true, encoding: .utf8)
        try moto.put(bucket: bucket, key: "there.csv", file: file)

        let missing = try Self.requests(moto, bucket: bucket, key: "not/there.csv")
        let notFound = try Self.send(missing.signed(method: "GET"))
        #expect(notFound.status == 404)
        let noKey = missing.failure(status: notFound.status, body: String(decoding: notFound.body, as: UTF8.self))
        #expect(noKey.contains("NoSuchKey") && noKey.contains("bucket \"\(bucket)\"") && noKey.contains("key \"not/there.csv\""), "\(noKey)")

        let noBucket = try Self.requests(moto, bucket: "no-such-bucket-\(UInt32.random(in: 0 ... .max))", key: "a.csv")
        let absent = try Self.send(noBucket.signed(method: "GET"))
        #expect(absent.status == 404)
        #expect(noBucket.failure(status: absent.status, body: String(decoding: absent.body, as: UTF8.self)).contains("NoSuchBucket"))

        let wrongSecret = "wrong-secret-\(UUID().uuidString)"
        let forged = try Self.requests(moto, bucket: bucket, key: "there.csv", secret: wrongSecret)
        let refused = try Self.send(forged.signed(method: "GET"))
        #expect(refused.status == 403)
        let signature = forged.failure(status: refused.status, body: String(decoding: refused.body, as: UTF8.self))
        #expect(signature.contains("SignatureDoesNotMatch") && signature.contains("there.csv"), "\(signature)")
        #expect(!signature.contains(wrongSecret) && !signature.contains(moto.secretAccessKey))

        let denied = try Self.requests(moto, bucket: bucket, key: "there.csv", secret: moto.deniedSecretAccessKey, keyID: moto.deniedAccessKeyID)
        let forbidden = try Self.send(denied.signed(method: "GET"))
        #expect(forbidden.status == 403)
        let accessDenied = denied.failure(status: forbidden.status, body: String(decoding: forbidden.body, as: UTF8.self))
        #expect(accessDenied.contains("AccessDenied") && accessDenied.contains(bucket), "\(accessDenied)")
        #expect(!accessDenied.contains(moto.deniedSecretAccessKey))
    }

    @Test("the test server's own client sees what it put; moto checks signatures")
    func motoServer() throws {
        let moto = try MotoServer.shared
        let bucket = try moto.bucket("support")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("s3-\(UUID().uuidString).csv").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        try "x\n".write(toFile: file, atomically: true, encoding: .utf8)
        try moto.put(bucket: bucket, key: "a/b.csv", file: file)
        #expect(try moto.keys(in: bucket) == ["a/b.csv"])
        #expect(try moto.pendingUploads(in: bucket) == 0)
        try FileManager.default.removeItem(atPath: file)
        try moto.get(bucket: bucket, key: "a/b.csv", file: file)
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "x\n")
        // Unsigned requests are refused: authentication is on.
        let address = "\(moto.endpoint)/\(bucket)/a/b.csv"
        #expect(try Self.send((address, [])).status == 403)
    }
}
#endif
