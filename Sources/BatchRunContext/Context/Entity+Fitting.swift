import BatchRunStore

/// The type check of every object write (`ManagedObject.set`, `insert`).
extension Entity {
    /// `value` as the column at `index` stores it; `ContextError.wrongType` when it does not fit.
    package func fitting(_ value: StoreValue, at index: Int) throws -> StoreValue {
        let column = columns[index]
        guard let fitted = column.type.fitting(value) else {
            throw ContextError.wrongType(entity: name, column: column.name, expected: column.type, given: value)
        }
        return fitted
    }
}
