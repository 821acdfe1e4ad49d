/// What one save changed, posted by the store after every commit (Core Data's
/// `NSManagedObjectContextDidSave`). Sendable: other contexts merge it.
public struct DidSave: Sendable, Hashable {
    /// The store's save counter for this commit; later saves have larger numbers.
    public var sequence: UInt64
    /// The job (or context name) that saved.
    public var savedBy: String
    public var inserted: [String: [ObjectID]]
    public var updated: [String: [ObjectID]]
    public var deleted: [String: [ObjectID]]

    package init(sequence: UInt64, savedBy: String, inserted: [String: [ObjectID]] = [:],
                updated: [String: [ObjectID]] = [:], deleted: [String: [ObjectID]] = [:]) {
        self.sequence = sequence
        self.savedBy = savedBy
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
    }

    package var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }

    /// The IDs a merge refreshes: updated, then inserted.
    package var refreshedIDs: [ObjectID] {
        Array(updated.values.joined()) + inserted.values.joined()
    }

    /// Every ID the save touched.
    package var allIDs: [ObjectID] {
        [inserted, updated, deleted].flatMap { $0.values.flatMap { $0 } }
    }
}
