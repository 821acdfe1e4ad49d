/// The kinds of step a job has, as job files and reports name them (`batch-update`).
///
/// ```swift
/// StepKind(rawValue: "batch-update")   // .batchUpdate
/// StepKind.batchUpdate.rawValue        // "batch-update"
/// ```
package enum StepKind: String, Sendable, Hashable, Codable, CaseIterable {
    case fetch
    case insert
    case delete
    case batchUpdate = "batch-update"
}
