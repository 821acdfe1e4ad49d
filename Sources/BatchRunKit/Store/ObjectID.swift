/// The identity of a row: its entity and primary-key values. Sendable, so it is what crosses
/// contexts (as `NSManagedObjectID` does); the objects themselves stay in their context.
///
/// ```swift
/// let id = ObjectID(entity: "Session", key: [.integer(41)])
/// print(id)   // Session(41)
/// ```
public struct ObjectID: Sendable, Hashable, CustomStringConvertible {
    public var entity: String
    /// Values of the entity's primary-key columns, in declaration order.
    public var key: [ParamValue]

    public init(entity: String, key: [ParamValue]) {
        self.entity = entity
        self.key = key
    }

    public var description: String {
        "\(entity)(\(key.map(\.description).joined(separator: ", ")))"
    }
}
