/// A save stopped by a conflict under the `error` policy; nothing of the save was written.
public struct MergeConflictError: BatchRunError {
    public var conflict: MergeConflict

    /// `conflict.optimistic`, `conflict.deleted` or `conflict.constraint`.
    package var code: String { "conflict.\(conflict.kind.rawValue)" }
    package var message: String { description }

    public var description: String {
        let what: String
        switch conflict.kind {
        case .optimistic: what = "was changed by \(conflict.changedBy) after this job read it"
        case .deleted: what = "was deleted by \(conflict.changedBy) after this job read it"
        case .constraint: what = "already exists (primary key or unique constraint; last changed \(conflict.changedBy == MergeConflict.outsideThisRun ? conflict.changedBy : "by " + conflict.changedBy))"
        }
        return "\(conflict.kind.rawValue) conflict under merge policy error: \(conflict.objectID) \(what)"
    }

    package init(conflict: MergeConflict) {
        self.conflict = conflict
    }
}
