/// How a save resolves a conflict (JOBFILE.md section 6).
///
/// ```swift
/// let policy = MergePolicy(rawValue: "object-trump")   // .objectTrump
/// ```
public enum MergePolicy: String, Sendable, Hashable, CaseIterable, Codable {
    /// The batch is rolled back and the job fails.
    case error
    /// Properties changed in the store keep the store's value.
    case storeTrump = "store-trump"
    /// Properties this job changed get this job's value.
    case objectTrump = "object-trump"
    /// The row is written whole as this job has it.
    case overwrite
    /// This job's change to the row is dropped.
    case rollback
    /// The step's expressions are evaluated again on the row as it is now.
    case recompute

    package static var names: [String] { allCases.map(\.rawValue) }
}
