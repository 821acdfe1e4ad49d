import BatchRunContext
import BatchRunStore

/// The rows one fetch read, for Core Data's batch faulting: the first time a relationship is
/// walked from one of its models, the rows it reaches are read for all of them, in one
/// statement per entity (a to-one) or per 30,000 keys (a to-many), and held while the models
/// are; a loop over the models then reads nothing more for it.
package final class FetchGroup {
    private struct Held {
        weak var object: ManagedObject?
    }

    private let objects: [Held]
    /// The rows a to-one read ahead, by its name: held, as the context holds rows weakly.
    private var readAhead: [String: [ManagedObject]] = [:]

    init(_ objects: [ManagedObject]) {
        self.objects = objects.map { Held(object: $0) }
    }

    /// The context's saves, rollbacks and resets when the rows were read ahead: after one of
    /// them they are read again (a saved change moves rows between to-manys).
    private var readAt: (saves: Int, discards: Int)?

    /// Drops what was read ahead when the context saved, rolled back or reset since.
    private func dropIfStale(_ core: ContextCore) {
        let now = (saves: core.saves, discards: core.discards)
        if let readAt, readAt != now {
            readAhead.removeAll()
            readAheadByKey.removeAll()
        }
        readAt = now
    }

    /// Reads the rows the to-one `property` (its column at `column`) points at from every
    /// model of the group, once.
    func readAhead(_ property: String, column: Int, destination: String, core: ContextCore) throws {
        dropIfStale(core)
        guard readAhead[property] == nil else { return }
        var keys = Set<StoreValue>()
        for held in objects {
            guard let object = held.object, object.values[column] != .null else { continue }
            keys.insert(object.values[column])
        }
        readAhead[property] = try core.existingObjects(with: keys.map { ObjectID(entity: destination, single: $0) }).compactMap { $0 }
    }

    /// The rows of the to-many `property` read ahead (held), by the key they pointed at when read.
    private var readAheadByKey: [String: [StoreValue: [ManagedObject]]] = [:]

    /// The rows of the to-many `property` of `object` among those read ahead for every model of
    /// the group (read once): the ones that pointed at it when read. The context's changes since
    /// are `relatedObjects(_:of:among:)`'s to see.
    func readAheadMany(_ property: String, of object: ManagedObject, core: ContextCore) throws -> [ManagedObject] {
        guard let key = object.objectID?.singleKey else { return [] }
        dropIfStale(core)
        if let rows = readAheadByKey[property] { return rows[key] ?? [] }
        guard let link = core.store.model.toMany(property, of: object.entity) else { return [] }
        let rows = try core.readAhead(property, of: objects.compactMap(\.object))
        let byKey = Dictionary(grouping: rows) { $0.values[link.column] }
        readAheadByKey[property] = byKey
        return byKey[key] ?? []
    }
}
