import BatchRunKit

/// Why `serve` cannot serve HTTPS with the files it was given.
///
/// ```swift
/// throw ServerTLSError(file: "page.crt", reason: "holds no certificate")
/// ```
package struct ServerTLSError: BatchRunError {
    package var file: String
    package var reason: String

    package var code: String { "serve.tls" }
    package var message: String { "\(file): \(reason)" }
    package var description: String { message }
    package var isInvalid: Bool { true }
}
