import BatchRunStore

/// Why an S3 request was not made or failed: no credentials, a profile that is not there, a
/// bad endpoint, an error response (its message names bucket, key and the service's code).
package struct S3Error: BatchRunError {
    package var message: String
    package var code: String { "s3.request" }
    package var description: String { message }
}
