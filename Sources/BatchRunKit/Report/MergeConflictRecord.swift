/// One conflict as written in the JSON report's `conflicts` array.
///
/// Filled by the contexts' merge policies; a run without conflicts has an empty array.
public struct MergeConflictRecord: Sendable, Hashable, Codable {
    public struct Property: Sendable, Hashable, Codable {
        public var name: String
        public var original: String?
        public var store: String?
        public var ours: String?
        public var resolved: String?
    }

    public var job: String
    public var entity: String
    public var key: [String: String]
    public var kind: String
    public var policy: String
    public var outcome: String
    public var changedBy: String
    public var properties: [Property]

    enum CodingKeys: String, CodingKey {
        case job, entity, key, kind, policy, outcome, properties
        case changedBy = "changed_by"
    }
}
