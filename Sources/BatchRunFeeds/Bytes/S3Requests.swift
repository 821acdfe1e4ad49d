#if NetworkFeeds
import Foundation

/// The S3 requests for one object, signed (SigV4) for the configuration's credentials and
/// region and addressed to its endpoint; and what an S3 error response says, in words that
/// name the bucket, the key and the service's error code, never a secret.
///
/// ```swift
/// let requests = S3Requests(configuration: try S3Configuration(environment: env), location: location)
/// let (url, headers) = requests.signed(method: "GET", headers: [("Range", "bytes=100-")])
/// ```
package struct S3Requests: Sendable {
    package let configuration: S3Configuration
    package let location: S3Location

    /// The URL and the headers (the given ones and the signature's) of one request, signed now.
    /// `payload`: the body's hash (`.empty` without one).
    package func signed(method: String, query: [(name: String, value: String)] = [], headers: [(name: String, value: String)] = [],
                payload: SigV4Signer.Payload = .empty, date: Date = Date()) -> (url: String, headers: [(name: String, value: String)]) {
        let address = configuration.address(of: location)
        let request = SigV4Signer.Request(method: method, host: address.host, path: address.path, query: query, headers: headers)
        let signer = SigV4Signer(credentials: configuration.credentials, region: configuration.region)
        return ("\(address.scheme)://\(address.host)\(request.target)",
                headers + signer.signedHeaders(for: request, payload: payload, date: date))
    }

    /// What an error response (`status`, its XML `body`) means for this object, e.g.
    /// `S3 answered 404 NoSuchKey for bucket "feeds", key "a.csv": the key is not in the bucket ...`.
    package func failure(status: Int, body: String) -> String {
        let code = Self.element("Code", in: body)
        let serviceMessage = Self.element("Message", in: body)
        let what = "bucket \"\(location.bucket)\", key \"\(location.key)\""
        var text = "S3 answered \(status)" + (code.map { " \($0)" } ?? "") + " for \(what)"
        if let serviceMessage, !serviceMessage.isEmpty { text += " (\(serviceMessage))" }
        let source = configuration.credentialSource
        switch code ?? (status == 404 ? "NoSuchKey" : "") {
        case "NoSuchKey":
            text += ": no object has this key; check the key (aws s3 ls s3://\(location.bucket)/)"
        case "NoSuchBucket":
            text += ": there is no such bucket at \(endpointName); check the bucket's name and AWS_ENDPOINT_URL"
        case "AccessDenied", "AllAccessDisabled":
            text += ": the credentials from \(source) may not do this; grant them s3:GetObject (feeds) or s3:PutObject (outputs) on it"
        case "SignatureDoesNotMatch":
            text += ": the secret access key from \(source) does not belong to its access key ID, or the request was altered on its way"
        case "InvalidAccessKeyId":
            text += ": the access key ID from \(source) is unknown to \(endpointName)"
        case "ExpiredToken", "InvalidToken", "TokenRefreshRequired":
            text += ": the session token from \(source) is no longer valid; get new temporary credentials"
        case "AuthorizationHeaderMalformed", "PermanentRedirect":
            text += ": the bucket is in another region than \(configuration.region); set AWS_REGION to the bucket's region"
        default:
            break
        }
        return text
    }

    /// `AWS_ENDPOINT_URL`'s host, or `AWS S3 (REGION)`.
    var endpointName: String {
        configuration.endpoint?.host ?? "AWS S3 (\(configuration.region))"
    }

    /// The text of the first `<name>` element of `xml`, unescaped.
    package static func element(_ name: String, in xml: String) -> String? {
        guard let start = xml.range(of: "<\(name)>"), let end = xml.range(of: "</\(name)>", range: start.upperBound..<xml.endIndex) else {
            return nil
        }
        return String(xml[start.upperBound..<end.lowerBound])
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&apos;", with: "'")
            .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&amp;", with: "&")
    }

    package init(configuration: S3Configuration, location: S3Location) {
        self.configuration = configuration
        self.location = location
    }
}
#endif
