/// What `recompute` evaluates again on a conflicting row, inside the save: a batch-update's
/// `set` expressions, or a delete's `where`.
public struct RecomputeRule: Sendable, Hashable {
    public var assignments: [(column: String, expression: String)]
    public var deleteWhere: String?
    public var params: [String: StoreValue]

    public init(assignments: [(column: String, expression: String)] = [], deleteWhere: String? = nil,
                params: [String: StoreValue] = [:]) {
        self.assignments = assignments
        self.deleteWhere = deleteWhere
        self.params = params
    }

    public static func == (lhs: RecomputeRule, rhs: RecomputeRule) -> Bool {
        lhs.assignments.map { "\($0.column)=\($0.expression)" } == rhs.assignments.map { "\($0.column)=\($0.expression)" }
            && lhs.deleteWhere == rhs.deleteWhere && lhs.params == rhs.params
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(deleteWhere)
        for assignment in assignments { hasher.combine(assignment.column); hasher.combine(assignment.expression) }
    }
}
