#if NetworkFeeds
import Foundation

/// An `s3://BUCKET/KEY` feed's GETs for `HTTPByteSource`: each attempt (the first, a retry
/// after a broken transfer, a resumed run's `Range` request) signed anew with SigV4 for the
/// credentials, region and endpoint the environment gives (`S3Configuration`). An error
/// response names the bucket, the key and S3's error code (`S3Requests.failure`).
struct S3RangedRequests: RangedRequestBuilder {
    package let requests: S3Requests

    package init(location: S3Location, environment: [String: String] = ProcessInfo.processInfo.environment) throws(ByteSourceError) {
        do {
            requests = S3Requests(configuration: try S3Configuration(environment: environment), location: location)
        } catch {
            throw ByteSourceError(message: error.message)
        }
    }

    var displayName: String { requests.location.description }

    package func request(from start: Int64, through end: Int64?, ifRange: String?) throws(ByteSourceError) -> RangedRequest {
        let signed = requests.signed(method: "GET", headers: Self.rangeHeaders(from: start, through: end, ifRange: ifRange))
        return RangedRequest(url: signed.url, headers: signed.headers)
    }

    package func failure(status: Int, reason: String, body: String) -> String {
        requests.failure(status: status, body: body)
    }
}
#endif
