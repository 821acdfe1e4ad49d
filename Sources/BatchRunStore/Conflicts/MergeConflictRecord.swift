/// One conflict as written in the JSON report's `conflicts` array.
public struct MergeConflictRecord: Sendable, Hashable, Codable {
    /// One property of the row: its value as the job read it, in the store at save time,
    /// as the job would write it, and as resolved.
    public struct Property: Sendable, Hashable, Codable {
        public var name: String
        public var original: JSONValue
        public var store: JSONValue
        public var ours: JSONValue
        public var resolved: JSONValue

        package init(name: String, original: JSONValue, store: JSONValue, ours: JSONValue, resolved: JSONValue) {
            self.name = name
            self.original = original
            self.store = store
            self.ours = ours
            self.resolved = resolved
        }
    }

    public var job: String
    public var entity: String
    /// The row's primary key, column to value.
    public var key: [String: JSONValue]
    public var kind: MergeConflict.Kind
    public var policy: MergePolicy
    public var outcome: MergeConflict.Outcome
    /// A job of this run, or `outside this run`.
    public var changedBy: String
    public var properties: [Property]

    package init(job: String, entity: String, key: [String: JSONValue], kind: MergeConflict.Kind, policy: MergePolicy,
                outcome: MergeConflict.Outcome,
                changedBy: String, properties: [Property]) {
        self.job = job
        self.entity = entity
        self.key = key
        self.kind = kind
        self.policy = policy
        self.outcome = outcome
        self.changedBy = changedBy
        self.properties = properties
    }

    package enum CodingKeys: String, CodingKey {
        case job, entity, key, kind, policy, outcome, properties
        case changedBy = "changed_by"
    }
}
