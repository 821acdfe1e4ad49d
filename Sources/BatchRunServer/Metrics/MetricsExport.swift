import CoreMetrics
import Foundation
import Prometheus

/// The process's metrics backend, bootstrapped once, the first time it is used: what
/// `BatchRunMetrics` records from then on is kept in Prometheus registries, written to a file
/// (`run --metrics-file`) or served at `/metrics` (`worker --metrics`).
///
/// ```swift
/// MetricsExport.start()
/// ... run ...
/// try MetricsExport.writeAndReset(to: "var/batchrun.prom")
/// ```
package enum MetricsExport {
    /// Made and bootstrapped once per process (a static let is initialized once, thread-safely).
    private static let factory: SwappableMetricsFactory = {
        let factory = SwappableMetricsFactory()
        MetricsSystem.bootstrap(factory)
        return factory
    }()

    /// Starts recording (again: a second call changes nothing).
    package static func start() {
        _ = factory
    }

    /// What was recorded so far, in Prometheus' text format.
    package static func text() -> String {
        factory.registry.emitToString()
    }

    /// Writes what was recorded since the last write (or the start) to `path`, atomically (a
    /// temporary file beside it, renamed over it), and starts afresh: a runner that runs several
    /// items writes each one's metrics alone.
    package static func writeAndReset(to path: String) throws {
        let text = factory.takeRegistry().emitToString()
        try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
    }
}
