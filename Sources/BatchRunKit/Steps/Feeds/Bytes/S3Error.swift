/// Why an S3 request was not made or failed: no credentials, a profile that is not there, a
/// bad endpoint, an error response (its message names bucket, key and the service's code).
struct S3Error: BatchRunError {
    var message: String
    var code: String { "s3.request" }
    var description: String { message }
}
