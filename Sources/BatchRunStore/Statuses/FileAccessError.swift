import Foundation

/// A file that could not be read, created or moved: which, what was done, and the system's
/// reason (`cannot write out/report.json: Permission denied`).
///
/// ```swift
/// throw FileAccessError(.write, path: path, errno: errno)
/// ```
package struct FileAccessError: BatchRunError, LocalizedError, Equatable {
    package enum Operation: String, Sendable {
        case read, write, move
    }

    package var operation: Operation
    package var path: String
    /// The system's reason, or what is wrong with the file.
    package var reason: String

    package init(_ operation: Operation, path: String, reason: String) {
        self.operation = operation
        self.path = path
        self.reason = reason
    }

    /// The reason from an `errno` value.
    package init(_ operation: Operation, path: String, errno code: Int32) {
        self.init(operation, path: path, reason: String(cString: strerror(code)))
    }

    package var code: String { "file.cannot-\(operation.rawValue)" }
    package var message: String { "cannot \(operation.rawValue) \(path): \(reason)" }
    package var description: String { message }
    /// `localizedDescription` reads the same as the description.
    package var errorDescription: String? { message }
}
