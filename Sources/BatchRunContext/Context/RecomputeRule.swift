import BatchRunStore

/// What `recompute` evaluates again on a conflicting row, inside the save: a batch-update's
/// `set` expressions, or a delete's `where`.
package struct RecomputeRule: Sendable, Hashable {
    package var assignments: [(column: String, expression: String)]
    package var deleteWhere: String?
    package var params: [String: StoreValue]

    package init(assignments: [(column: String, expression: String)] = [], deleteWhere: String? = nil,
                params: [String: StoreValue] = [:]) {
        self.assignments = assignments
        self.deleteWhere = deleteWhere
        self.params = params
    }

    package static func == (lhs: RecomputeRule, rhs: RecomputeRule) -> Bool {
        lhs.assignments.map { "\($0.column)=\($0.expression)" } == rhs.assignments.map { "\($0.column)=\($0.expression)" }
            && lhs.deleteWhere == rhs.deleteWhere && lhs.params == rhs.params
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(deleteWhere)
        for assignment in assignments { hasher.combine(assignment.column); hasher.combine(assignment.expression) }
    }
}
