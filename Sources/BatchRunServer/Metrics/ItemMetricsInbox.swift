import BatchRunKit
import Foundation
import Synchronization

/// Where a worker's items' processes leave their metrics (`--metrics-file` in a folder of the
/// worker's own), and what they added up to: the worker's `/metrics` shows its own registry
/// plus these, so rows, conflicts and batches counted in the items' processes are there too.
///
/// ```swift
/// let inbox = try ItemMetricsInbox()
/// let path = inbox.nextPath()        // given to the item's run as --metrics-file
/// inbox.absorb(path)                 // after the item's run ended
/// inbox.text()                       // the worker's metrics and its items'
/// ```
package final class ItemMetricsInbox: Sendable {
    let folder: String
    private let scratch = ScratchFolder(prefix: "batchrun-worker-metrics")
    private let state = Mutex<(next: Int, total: PrometheusText)>((0, PrometheusText()))

    /// A new private folder (`ScratchFolder`), removed with `close()`.
    package init() throws {
        folder = try scratch.path()
    }

    /// A file for the next item's metrics.
    package func nextPath() -> String {
        let number = state.withLock { state in
            state.next += 1
            return state.next
        }
        return folder + "/item-\(number).prom"
    }

    /// Adds the metrics an item's run wrote at `path` (nothing when it wrote none: killed), and
    /// removes the file.
    package func absorb(_ path: String) {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return }
        try? FileManager.default.removeItem(atPath: path)
        let parsed = PrometheusText(parsing: text)
        state.withLock { $0.total.add(parsed) }
    }

    /// This process's metrics and the items', in Prometheus' text format.
    package func text() -> String {
        var total = PrometheusText(parsing: MetricsExport.text())
        total.add(state.withLock { $0.total })
        return total.rendered
    }

    package func close() {
        scratch.remove()
    }
}
