#if NetworkFeeds
import Crypto
import Foundation

/// AWS Signature Version 4 for S3 requests (header signing, as the AWS tools do it): the
/// canonical request, the string to sign, the signing key (HMAC-SHA256 chained over date,
/// region, service, `aws4_request`) and the headers to send. S3 paths are encoded once and not
/// normalized; `x-amz-content-sha256` carries the payload's hash or `UNSIGNED-PAYLOAD`.
///
/// ```swift
/// let signer = SigV4Signer(credentials: credentials, region: "us-east-1")
/// let request = SigV4Signer.Request(method: "GET", host: "127.0.0.1:5000", path: "/bucket/feed.csv",
///                                   headers: [("range", "bytes=100-")])
/// let headers = signer.signedHeaders(for: request, payload: .empty, date: Date())
/// // send request.target with request.headers + headers
/// ```
package struct SigV4Signer: Sendable {
    /// A request as it will be sent: path and query decoded (the signer and `target` encode them).
    package struct Request: Sendable {
        package var method: String
        /// `host` or `host:port` as sent in the `Host` header.
        package var host: String
        /// The decoded path, starting with `/` (`/bucket/key with spaces`).
        package var path: String
        /// Decoded query parameters; a parameter without a value (`?uploads`) has `""`.
        package var query: [(name: String, value: String)] = []
        /// Other headers to sign and send (`range`, `content-type`, ...).
        package var headers: [(name: String, value: String)] = []

        /// The request target as sent: the path and query, encoded as they are signed.
        package var target: String {
            let path = SigV4Signer.encode(self.path, keepingSlashes: true)
            guard !query.isEmpty else { return path }
            return path + "?" + query.map { SigV4Signer.encode($0.name) + "=" + SigV4Signer.encode($0.value) }.joined(separator: "&")
        }

        package init(method: String, host: String, path: String, query: [(name: String, value: String)] = [], headers: [(name: String, value: String)] = []) {
            self.method = method
            self.host = host
            self.path = path
            self.query = query
            self.headers = headers
        }
    }

    /// What `x-amz-content-sha256` says of the body.
    package enum Payload: Sendable {
        /// No body (a GET, a DELETE): the hash of zero bytes.
        case empty
        /// The body's SHA-256, hex (`SigV4Signer.hash(_:)`).
        case hash(String)
        /// `UNSIGNED-PAYLOAD`: the body is not part of the signature (TLS protects it).
        case unsigned

        package var value: String {
            switch self {
            case .empty: SigV4Signer.emptyHash
            case let .hash(hex): hex
            case .unsigned: "UNSIGNED-PAYLOAD"
            }
        }
    }

    package static let emptyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    package let credentials: AWSCredentials
    package let region: String
    /// `s3`; the AWS test suite signs for `service`.
    package var service = "s3"

    package init(credentials: AWSCredentials, region: String, service: String = "s3", sendsContentHash: Bool = true) {
        self.credentials = credentials
        self.region = region
        self.service = service
        self.sendsContentHash = sendsContentHash
    }
    /// Whether `x-amz-content-sha256` is sent and signed (S3 requires it; the generic test
    /// suite's vectors have none).
    package var sendsContentHash = true

    /// The headers to add to `request`: `x-amz-date`, `x-amz-content-sha256`,
    /// `x-amz-security-token` (with a session token) and `authorization`.
    package func signedHeaders(for request: Request, payload: Payload, date: Date) -> [(name: String, value: String)] {
        let parts = signature(for: request, payload: payload, date: date)
        return parts.addedHeaders + [("authorization", parts.authorization)]
    }

    /// Every step of the signature, for tests that compare them with published ones.
    package struct Signature {
        package var canonicalRequest: String
        package var stringToSign: String
        package var signature: String
        package var authorization: String
        /// The headers the signer adds, before `authorization`.
        var addedHeaders: [(name: String, value: String)]
    }

    package func signature(for request: Request, payload: Payload, date: Date) -> Signature {
        let timestamp = Self.timestamp(date)
        let day = String(timestamp.prefix(8))
        var added: [(name: String, value: String)] = [("x-amz-date", timestamp)]
        if sendsContentHash { added.append(("x-amz-content-sha256", payload.value)) }
        if let token = credentials.sessionToken { added.append(("x-amz-security-token", token)) }

        // Canonical headers: lower-case names, sorted; values trimmed, inner runs of spaces made
        // one; repeated names joined by commas.
        var values: [String: [String]] = ["host": [request.host]]
        for (name, value) in request.headers + added {
            values[name.lowercased(), default: []].append(Self.trimmed(value))
        }
        let names = values.keys.sorted()
        let signedNames = names.joined(separator: ";")
        let canonicalHeaders = names.map { "\($0):\(values[$0]!.joined(separator: ","))\n" }.joined()
        // Sorted by encoded name, then by encoded value.
        let encodedQuery: [(name: String, value: String)] = request.query.map { (Self.encode($0.name), Self.encode($0.value)) }
        let sortedQuery = encodedQuery.sorted { (a: (name: String, value: String), b: (name: String, value: String)) -> Bool in
            a.name != b.name ? a.name < b.name : a.value < b.value
        }
        let canonicalQuery = sortedQuery.map { (pair: (name: String, value: String)) -> String in pair.name + "=" + pair.value }
            .joined(separator: "&")
        let canonicalRequest = [
            request.method,
            Self.encode(request.path, keepingSlashes: true),
            canonicalQuery,
            canonicalHeaders,
            signedNames,
            payload.value,
        ].joined(separator: "\n")

        let scope = "\(day)/\(region)/\(service)/aws4_request"
        let stringToSign = ["AWS4-HMAC-SHA256", timestamp, scope, Self.hash(Data(canonicalRequest.utf8))].joined(separator: "\n")
        var key = SymmetricKey(data: Data("AWS4\(credentials.secretAccessKey)".utf8))
        for part in [day, region, service, "aws4_request"] {
            key = SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: Data(part.utf8), using: key)))
        }
        let signature = Self.hex(HMAC<SHA256>.authenticationCode(for: Data(stringToSign.utf8), using: key))
        let authorization = "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope), SignedHeaders=\(signedNames), Signature=\(signature)"
        return Signature(canonicalRequest: canonicalRequest, stringToSign: stringToSign, signature: signature,
                         authorization: authorization, addedHeaders: added)
    }

    /// SHA-256 of `bytes`, lower-case hex.
    package static func hash(_ bytes: some DataProtocol) -> String {
        hex(SHA256.hash(data: bytes))
    }

    /// `20150830T123600Z`: the date in UTC as SigV4 writes it.
    package static func timestamp(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))T\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))Z"
    }

    /// RFC 3986 percent-encoding of UTF-8 bytes: `A-Z a-z 0-9 - . _ ~` stay (and `/` in a path).
    package static func encode(_ text: String, keepingSlashes: Bool = false) -> String {
        var encoded = ""
        encoded.reserveCapacity(text.utf8.count)
        let digits = Array("0123456789ABCDEF".utf8)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: "/") where keepingSlashes:
                encoded.append("/")
            default:
                encoded.append("%")
                encoded.unicodeScalars.append(Unicode.Scalar(digits[Int(byte >> 4)]))
                encoded.unicodeScalars.append(Unicode.Scalar(digits[Int(byte & 0x0F)]))
            }
        }
        return encoded
    }

    private static func trimmed(_ value: String) -> String {
        value.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
    }

    private static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
#endif
