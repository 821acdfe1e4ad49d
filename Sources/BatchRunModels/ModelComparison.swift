/// How a `ModelFilter` compares a property with a value (`#Filter`'s `==`, `!=`, `<`, `<=`,
/// `>`, `>=`). Compared with nil, `equal` is `IS NULL` and `notEqual` `IS NOT NULL`.
///
/// ```swift
/// let late = ModelFilter<Flight>.compare(\.delay, .greater, 10)
/// ```
public enum ModelComparison: String, Sendable {
    /// `==`: SQL's `=`; `IS NULL` with nil.
    case equal = "="
    /// `!=`: SQL's `<>`, a NULL of an optional property included; `IS NOT NULL` with nil.
    case notEqual = "<>"
    /// `<`.
    case less = "<"
    /// `<=`.
    case lessOrEqual = "<="
    /// `>`.
    case greater = ">"
    /// `>=`.
    case greaterOrEqual = ">="
}
