import BatchRunContext
import BatchRunStore

/// A fetch of models: the descriptor as a `FetchRequest` for the store's model, and the
/// objects read as models, each checked against its properties' types.
enum ModelFetch {
    static func request<Root: PersistentModel>(_ descriptor: FetchDescriptor<Root>, core: ContextCore) throws -> FetchRequest {
        let schema = Root.modelSchema
        let model = core.store.model
        let entity = try ModelBacking.entity(of: Root.self, in: core)
        var params: [String: StoreValue] = [:]
        let condition = try descriptor.filter?.render(model, &params)
        var request = FetchRequest(entity: schema.entityName, where: condition, params: params, limit: descriptor.fetchLimit)
        request.sortedBy = try descriptor.sortBy.map { sort in
            guard let property = schema.property(for: sort.keyPath), let index = schema.columnIndex(of: property.name) else {
                throw ModelError.notStored(model: schema.entityName)
            }
            let name = entity.columns[index].name
            return sort.order == .forward ? .ascending(name) : .descending(name)
        }
        return request
    }

    /// The models over `objects`; a stored value a property cannot take throws `ModelError.storedValue`.
    static func models<Root: PersistentModel>(_ objects: [ManagedObject], core: ContextCore) throws -> [Root] {
        let checked = Root.modelSchema.properties.filter(\.hasColumn).enumerated().map { ($0.offset, $0.element) }
        let group = objects.count > 1 ? FetchGroup(objects) : nil
        return try objects.map { object in
            for (index, property) in checked where !property.fits(object.values[index]) {
                throw ModelError.storedValue(model: Root.modelSchema.entityName, property: property.name,
                                             key: object.objectID?.singleKey ?? .null, value: object.values[index])
            }
            return ModelBacking.model(for: object, core: core, group: group)
        }
    }
}
