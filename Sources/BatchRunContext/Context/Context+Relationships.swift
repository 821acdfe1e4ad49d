/// Relationships through a private context: related objects read when first asked for.
extension Context {
    /// The object a to-one refers to (`"airline"` of a flight): registered, or read; nil when
    /// its column is NULL or the row is gone. `ContextError.unknownRelationship` for a name the
    /// object's entity does not declare.
    ///
    /// ```swift
    /// let airline = try context.relatedObject("airline", of: flight)
    /// ```
    public func relatedObject(_ relationship: String, of object: ManagedObject) throws -> ManagedObject? {
        try core.relatedObject(relationship, of: object)
    }

    /// The objects of a to-many (the inverse of a to-one: `"flights"` of an airline), read in one
    /// statement in key order when asked for; this context's unsaved changes count.
    ///
    /// ```swift
    /// for flight in try context.relatedObjects("flights", of: airline) { try flight.set("gate", to: "B7") }
    /// ```
    public func relatedObjects(_ relationship: String, of object: ManagedObject) throws -> [ManagedObject] {
        try core.relatedObjects(relationship, of: object)
    }
}
