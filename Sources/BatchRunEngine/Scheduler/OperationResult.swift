/// How a `BatchOperation` ended, with the value its work returned when it succeeded: what its
/// completion block receives and `run()` returns. The outcome's properties read through it.
///
/// ```swift
/// count.completionBlock = { result in
///     print(result.name, result.status, result.value ?? 0)   // value: Int?
/// }
/// ```
@dynamicMemberLookup
public struct OperationResult<Value: Sendable>: Sendable {
    public var outcome: OperationOutcome
    /// What the work returned; nil unless the status is `ok`.
    public var value: Value?

    package init(outcome: OperationOutcome, value: Value?) {
        self.outcome = outcome
        self.value = value
    }

    public subscript<T>(dynamicMember keyPath: KeyPath<OperationOutcome, T>) -> T {
        outcome[keyPath: keyPath]
    }
}
