/// One conflict met at save and how the merge policy resolved it
/// (Core Data's `NSMergeConflict` and `NSConstraintConflict` in one).
public struct MergeConflict: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable, Codable {
        /// A row this context read and changed or deletes differs in the store at save time.
        case optimistic
        /// A row this context read and changed is gone from the store.
        case deleted
        /// An inserted row collides with an existing row on its primary key or a unique constraint.
        case constraint
    }

    /// What the merge policy made of the conflict.
    public enum Outcome: String, Sendable, Hashable, Codable {
        /// `storeTrump` or `objectTrump`: each property kept the change of one side and the row
        /// has both sides' changes (the winner's where both changed it).
        case merged
        /// The store's row stayed as it is: nothing of ours was left to write (`storeTrump`), or
        /// the row was deleted in the store, or a delete was not done.
        case keptStore = "kept_store"
        /// `objectTrump`: our changed properties were written, nothing of the store's was left.
        case keptOurs = "kept_ours"
        /// `overwrite`: the colliding row was replaced by ours.
        case overwritten
        /// `rollback`: the whole batch was undone.
        case rolledBack = "rolled_back"
        /// `recompute`: our change was computed again from the store's row.
        case recomputed
        /// `error`: the save stopped (`MergeConflictError`); nothing of it was written.
        case failed
    }

    /// One property; nil means there was no row (deleted in the store, or not yet inserted).
    public struct Property: Sendable, Hashable {
        /// The column.
        public var name: String
        /// Its value when this context read the row.
        public var original: StoreValue?
        /// Its value in the store at the save.
        public var store: StoreValue?
        /// The value this context saved.
        public var ours: StoreValue?
        /// The value written in the end (the store's when nothing was written).
        public var resolved: StoreValue?

        package init(name: String, original: StoreValue? = nil, store: StoreValue? = nil, ours: StoreValue? = nil, resolved: StoreValue? = nil) {
            self.name = name
            self.original = original
            self.store = store
            self.ours = ours
            self.resolved = resolved
        }
    }

    /// The job (or context) whose save met the conflict.
    public var job: String
    /// The row.
    public var objectID: ObjectID
    public var kind: Kind
    /// The merge policy that resolved it.
    public var policy: MergePolicy
    public var outcome: Outcome
    /// The job of this run that changed the row, or `outside this run`.
    public var changedBy: String
    public var properties: [Property]

    package static let outsideThisRun = "outside this run"

    /// The conflict as the JSON report writes it.
    package func record(entity: Entity) -> MergeConflictRecord {
        let key = Dictionary(uniqueKeysWithValues: zip(entity.primaryKey, objectID.key.map(\.jsonValue)))
        return MergeConflictRecord(
            job: job, entity: objectID.entity, key: key, kind: kind, policy: policy,
            outcome: outcome, changedBy: changedBy,
            properties: properties.map {
                .init(name: $0.name, original: $0.original?.jsonValue ?? .null, store: $0.store?.jsonValue ?? .null,
                      ours: $0.ours?.jsonValue ?? .null, resolved: $0.resolved?.jsonValue ?? .null)
            })
    }

    package init(job: String, objectID: ObjectID, kind: Kind, policy: MergePolicy, outcome: Outcome, changedBy: String, properties: [Property]) {
        self.job = job
        self.objectID = objectID
        self.kind = kind
        self.policy = policy
        self.outcome = outcome
        self.changedBy = changedBy
        self.properties = properties
    }
}
