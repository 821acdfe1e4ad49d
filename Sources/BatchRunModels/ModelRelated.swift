/// Relationship reads that throw (`Context.related(_:of:)`): the property's name found by its
/// key path, then read as the getter reads it; a model with no row answers from itself.
enum ModelRelated {
    static func one<Root: PersistentModel, Destination: PersistentModel>(_ keyPath: KeyPath<Root, Destination?>, of model: Root) throws -> Destination? {
        guard let object = model.modelBacking.current() else { return model[keyPath: keyPath] }
        return try model.modelBacking.readRelated(try name(keyPath, in: Root.self), of: object, Root.self)
    }

    static func many<Root: PersistentModel, Destination: PersistentModel>(_ keyPath: KeyPath<Root, [Destination]>, of model: Root) throws -> [Destination] {
        guard let object = model.modelBacking.current() else { return model[keyPath: keyPath] }
        return try model.modelBacking.readRelatedMany(try name(keyPath, in: Root.self), of: object)
    }

    private static func name<Root: PersistentModel>(_ keyPath: AnyKeyPath, in root: Root.Type) throws -> String {
        guard let property = Root.modelSchema.property(for: keyPath) else { throw ModelError.notStored(model: Root.modelSchema.entityName) }
        return property.name
    }
}
