import BatchRunStore

/// A model's schema as `@Model` read it from the class: its entity's name and table, and its
/// properties in declaration order. `Model(_:columnNames:)` makes the entities of several.
///
/// ```swift
/// for property in Flight.modelSchema.properties { print(property.name, property.kind) }
/// ```
public struct ModelSchema: Sendable {
    /// The class it describes.
    public let type: any PersistentModel.Type
    /// The entity's name: the class's.
    public let entityName: String
    /// The table's name when `@Model(table:)` gives one (the entity's name else).
    public let table: String?
    /// Its stored properties, in declaration order.
    public let properties: [ModelProperty]
    /// For each property stored in a column, its column's place in the entity.
    private let columnIndexes: [String: Int]
    /// Whether any property is a relationship: an insert then has a graph to walk.
    let hasRelationships: Bool
    /// Whether any property is a to-many.
    let hasToMany: Bool

    /// The schema of a model class; `@Model` writes it as `modelSchema`.
    ///
    /// ```swift
    /// static let modelSchema = ModelSchema(Airline.self, table: nil, properties: [
    ///     ModelProperty("id", \Airline.id, key: true), ModelProperty("name", \Airline.name, unique: true),
    ///     ModelProperty("flights", \Airline.flights, deleteRule: .cascade, inverse: \Flight.airline)])
    /// ```
    public init<Root: PersistentModel>(_ type: Root.Type, table: String?, properties: [ModelProperty]) {
        self.type = type
        self.entityName = String(describing: type)
        self.table = table
        self.properties = properties
        var indexes: [String: Int] = [:]
        for property in properties where property.hasColumn { indexes[property.name] = indexes.count }
        self.columnIndexes = indexes
        self.hasToMany = properties.contains { if case .toMany = $0.kind { return true } else { return false } }
        self.hasRelationships = hasToMany || properties.contains { if case .toOne = $0.kind { return true } else { return false } }
    }

    /// The property named so (a Swift property's name).
    func property(named name: String) -> ModelProperty? {
        properties.first { $0.name == name }
    }

    /// The property of a key path (`\Flight.delay`); nil for one `@Model` does not store.
    func property(for keyPath: AnyKeyPath) -> ModelProperty? {
        properties.first { ($0.keyPath as AnyKeyPath) == keyPath }
    }

    /// The place of the property's column in the entity.
    func columnIndex(of name: String) -> Int? {
        columnIndexes[name]
    }

    /// The primary key's property.
    var key: ModelProperty? {
        properties.first(where: \.isKey)
    }
}
