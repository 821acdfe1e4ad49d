import BatchRunEngine
import Foundation
import Synchronization

/// The rows each done part's run wrote, read from its report once (a done item's report does
/// not change), kept by a `QueueFolder` value between live snapshots.
final class DoneRowsCache: Sendable {
    private let rowsByReport = Mutex<[String: Int]>([:])

    func rows(of report: String) -> Int {
        if let known = rowsByReport.withLock({ $0[report] }) { return known }
        guard let data = FileManager.default.contents(atPath: report), let decoded = try? RunReport(jsonData: data) else { return 0 }
        rowsByReport.withLock { $0[report] = decoded.rowsWritten }
        return decoded.rowsWritten
    }
}
