import BatchRunStore

/// What a batch request did: the rows it changed and the conflicts its saves resolved (each
/// with its outcome under the context's merge policy).
///
/// ```swift
/// let result = try await context.perform { try $0.execute(BatchDeleteRequest(entity: "Session", where: nil)) }
/// print(result.rows.deleted, result.batches, Array(result.conflicts).map(\.outcome))
/// ```
public struct BatchResult: Sendable {
    /// Rows inserted, updated and deleted.
    public var rows: RowCounts
    /// Batches committed, each one save.
    public var batches: Int
    public var conflicts: ConflictRecords

    package init(_ report: StepReport) {
        rows = report.rows
        batches = report.batches.committed
        conflicts = report.conflictRecords
    }
}
