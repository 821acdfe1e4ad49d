/// Relationships through the main context (as `Context.relatedObject` and `relatedObjects`),
/// read on the main actor: a row, or one to-many's rows.
extension MainContext {
    /// The object a to-one refers to, nil for NULL or a row that is gone.
    public func relatedObject(_ relationship: String, of object: ManagedObject) throws -> ManagedObject? {
        try core.relatedObject(relationship, of: object)
    }

    /// The objects of a to-many, read in one statement when asked for.
    public func relatedObjects(_ relationship: String, of object: ManagedObject) throws -> [ManagedObject] {
        try core.relatedObjects(relationship, of: object)
    }
}
