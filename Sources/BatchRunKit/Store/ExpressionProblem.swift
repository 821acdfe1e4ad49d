/// Why an expression was refused, whichever database checked it; `offset` is the byte offset
/// in the statement's SQL when the database says where.
///
/// ```swift
/// ExpressionProblem(message: "no such column: stauts", offset: 31)
/// ```
struct ExpressionProblem: Error, Sendable, Equatable {
    var message: String
    var offset: Int?
}
