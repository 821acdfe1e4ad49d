import BatchRunStore

/// What a save did: its `DidSave`, the conflicts met and how they were resolved, and counts.
public struct SaveResult: Sendable {
    public var didSave: DidSave?
    public var conflicts: [MergeConflict] = []
    public var inserted = 0
    public var updated = 0
    public var deleted = 0

    package init(didSave: DidSave? = nil) {
        self.didSave = didSave
    }
}
