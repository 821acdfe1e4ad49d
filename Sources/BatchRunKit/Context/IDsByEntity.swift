/// Object IDs grouped by entity, for a `DidSave`; cheap when a batch is all of one entity,
/// as batches almost always are.
struct IDsByEntity {
    private var groups: [(entity: String, ids: [ObjectID])] = []

    mutating func append(_ id: ObjectID) {
        if let last = groups.indices.last, groups[last].entity == id.entity {
            groups[last].ids.append(id)
        } else if let index = groups.firstIndex(where: { $0.entity == id.entity }) {
            groups[index].ids.append(id)
        } else {
            groups.append((id.entity, [id]))
        }
    }

    /// IDs that all belong to one entity.
    mutating func append(contentsOf ids: [ObjectID]) {
        guard let entity = ids.first?.entity else { return }
        if let index = groups.firstIndex(where: { $0.entity == entity }) {
            groups[index].ids.append(contentsOf: ids)
        } else {
            groups.append((entity, ids))
        }
    }

    var count: Int { groups.reduce(0) { $0 + $1.ids.count } }

    var dictionary: [String: [ObjectID]] {
        Dictionary(groups.map { ($0.entity, $0.ids) }, uniquingKeysWith: +)
    }
}
