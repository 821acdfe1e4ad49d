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

    public enum Outcome: String, Sendable, Hashable, Codable {
        case merged
        case keptStore = "kept_store"
        case keptOurs = "kept_ours"
        case overwritten
        case rolledBack = "rolled_back"
        case recomputed
        case failed
    }

    /// One property; nil means there was no row (deleted in the store, or not yet inserted).
    public struct Property: Sendable, Hashable {
        public var name: String
        public var original: StoreValue?
        public var store: StoreValue?
        public var ours: StoreValue?
        public var resolved: StoreValue?

        package init(name: String, original: StoreValue? = nil, store: StoreValue? = nil, ours: StoreValue? = nil, resolved: StoreValue? = nil) {
            self.name = name
            self.original = original
            self.store = store
            self.ours = ours
            self.resolved = resolved
        }
    }

    public var job: String
    public var objectID: ObjectID
    public var kind: Kind
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
