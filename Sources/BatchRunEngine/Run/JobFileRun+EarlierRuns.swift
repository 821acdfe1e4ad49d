import BatchRunStore
import BatchRunContext
import Foundation

extension JobFileRun {
    /// The runs of a report's job file before it (an HTML report's trends), read from the store
    /// the report names when it can be read from here; nil when it cannot (an SQLite file that
    /// is not here is not created).
    ///
    /// ```swift
    /// let report = try RunReport(jsonData: Data(contentsOf: url))
    /// let trends = JobFileRun.earlierRuns(before: report)
    /// ```
    package static func earlierRuns(before report: RunReport) -> RunHistory? {
        let spec = StoreSpec(location: report.store)
        guard spec.isOnServer || FileManager.default.fileExists(atPath: report.store),
              let store = try? Store(spec, model: Model(entities: [])),
              let summaries = try? history(ofFileAt: report.file, in: store, limit: 21) else { return nil }
        return earlierRuns(than: report.runID, in: summaries)
    }
}
