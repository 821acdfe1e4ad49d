import BatchRunKit

/// A `--token-file` that `serve --actions` cannot use.
///
/// ```swift
/// throw ServeTokenFileError(file: "operators", line: 3, reason: "expected NAME TOKEN, found 1 field")
/// ```
package struct ServeTokenFileError: BatchRunError {
    package var file: String
    package var line: Int?
    package var reason: String

    package var code: String { "serve.token-file" }
    package var message: String { reason }
    package var location: SourceLocation? { line.map { SourceLocation(file: file, line: $0, column: 1) } }
    package var description: String { "\(line.map { "\(file):\($0):1" } ?? file): \(reason)" }
    package var isInvalid: Bool { true }
}
