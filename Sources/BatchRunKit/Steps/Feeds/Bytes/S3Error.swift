/// Why an S3 request was not made or failed: no credentials, a profile that is not there, a
/// bad endpoint, an error response (its message names bucket, key and the service's code).
struct S3Error: Error, Sendable, CustomStringConvertible {
    var message: String
    var description: String { message }
}
