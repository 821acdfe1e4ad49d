/// The identity of a row: its entity and primary-key values. Sendable, so it is what crosses
/// contexts (as `NSManagedObjectID` does); the objects themselves stay in their context.
///
/// ```swift
/// let id = ObjectID(entity: "Session", key: [.integer(41)])
/// print(id)   // Session(41)
/// ```
public struct ObjectID: Sendable, Hashable, CustomStringConvertible {
    /// A one-column key is kept without an array: reading a million rows makes a million IDs.
    /// (`@usableFromInline`, as are the initialisers, hashing and equality: contexts in other
    /// modules make and look up IDs per row.)
    @usableFromInline enum Key: Sendable, Hashable {
        case single(StoreValue)
        case composite([StoreValue])
    }

    public var entity: String
    @usableFromInline var storage: Key

    @inlinable public init(entity: String, key: [StoreValue]) {
        self.entity = entity
        self.storage = key.count == 1 ? .single(key[0]) : .composite(key)
    }

    @inlinable package init(entity: String, single value: StoreValue) {
        self.entity = entity
        self.storage = .single(value)
    }

    /// Values of the entity's primary-key columns, in declaration order.
    public var key: [StoreValue] {
        switch storage {
        case .single(let value): return [value]
        case .composite(let values): return values
        }
    }

    /// The value of a one-column key.
    @inlinable package var singleKey: StoreValue? {
        if case .single(let value) = storage { return value }
        return nil
    }

    /// Hashes the key only: IDs in one dictionary almost always share their entity, and
    /// hashing its name for every row showed in profiles.
    @inlinable public func hash(into hasher: inout Hasher) {
        hasher.combine(storage)
    }

    @inlinable public static func == (lhs: ObjectID, rhs: ObjectID) -> Bool {
        lhs.storage == rhs.storage && lhs.entity == rhs.entity
    }

    public var description: String {
        "\(entity)(\(key.map(\.description).joined(separator: ", ")))"
    }
}
