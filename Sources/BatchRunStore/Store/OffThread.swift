import Foundation

/// Runs `work`, which blocks (a database call), on a thread of its own, so that an async
/// caller's thread (a cooperative pool's) is not held meanwhile.
///
/// ```swift
/// let rows = try await offThread { try backend.read(interruptedBy: nil) { db in try count(db) } }
/// ```
package func offThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
    }
}
