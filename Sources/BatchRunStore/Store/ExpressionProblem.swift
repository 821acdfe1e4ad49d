/// Why an expression was refused, whichever database checked it; `offset` is the byte offset
/// in the statement's SQL when the database says where.
///
/// ```swift
/// ExpressionProblem(message: "no such column: stauts", offset: 31)
/// ```
package struct ExpressionProblem: Error, Sendable, Equatable {
    package var message: String
    package var offset: Int?

    package init(message: String, offset: Int? = nil) {
        self.message = message
        self.offset = offset
    }
}
