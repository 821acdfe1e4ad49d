import BatchRunStore

/// A context's registered objects, as Core Data keeps them: by ID and weakly (an object nobody
/// holds any more is forgotten), except objects with changes, which are held until saved or
/// rolled back, and every object while `retainsObjects` is set. It knows which objects were
/// changed (an object tells it at its first write), so a save looks at the changed objects
/// only, not at every registered one.
///
/// Not Sendable: it lives in the isolation of the context that owns it, as its objects do.
package final class ObjectRegistry {
    /// One registered object, held weakly.
    private struct Entry {
        weak var object: ManagedObject?
    }

    private var entries: [ObjectID: Entry] = [:]
    /// Objects given a value, or deleted, since their snapshot: held strongly until saved.
    package private(set) var changed: [ObjectIdentifier: ManagedObject] = [:]
    /// Every registered object, strongly, while `retainsObjects` is set.
    private var retained: [ObjectID: ManagedObject] = [:]
    /// Core Data's `retainsRegisteredObjects`.
    var retainsObjects = false {
        didSet {
            if retainsObjects && !oldValue {
                for (id, entry) in entries { if let object = entry.object { retained[id] = object } }
            } else if !retainsObjects {
                retained.removeAll()
            }
        }
    }
    /// Registered objects that died (their `deinit` says so) since the last sweep: `add` sweeps
    /// out the dead entries once they are as many as the live ones, so a sweep's cost is paid
    /// by as many deaths, and a registry whose objects all live (a large fetch) never sweeps.
    private var dead = 0

    /// The registered object with this ID, if it is still alive.
    package subscript(id: ObjectID) -> ManagedObject? {
        entries[id]?.object
    }

    /// True when nothing was ever registered since the last `removeAll` (or every entry swept).
    package var isEmpty: Bool { entries.isEmpty }

    /// Entries, the dead among them until the next sweep.
    package var count: Int { entries.count }

    /// Every registered object still alive.
    package var objects: [ManagedObject] { entries.values.compactMap(\.object) }

    package func reserveCapacity(_ count: Int) { entries.reserveCapacity(count) }

    /// Registers `object` under `id`, replacing whatever was there.
    package func add(_ object: ManagedObject, id: ObjectID) {
        if dead >= 1_024 && dead * 2 >= entries.count { sweep() }
        if let replaced = entries.updateValue(Entry(object: object), forKey: id)?.object, replaced !== object {
            replaced.registry = nil
        }
        if retainsObjects { retained[id] = object }
        object.registry = self
        if object.wasWritten && object.snapshot != nil { changed[ObjectIdentifier(object)] = object }
    }

    /// Forgets the object registered under `id` (only `object`, when given).
    package func remove(_ id: ObjectID, ifItIs object: ManagedObject? = nil) {
        guard let registered = entries[id]?.object, object == nil || registered === object else {
            if object == nil { entries[id] = nil }
            return
        }
        entries[id] = nil
        retained[id] = nil
        changed[ObjectIdentifier(registered)] = nil
        registered.registry = nil
    }

    /// Called by a registered object's `deinit`: its entry is dead until the next sweep.
    func objectDied() {
        dead += 1
    }

    /// Called by a registered object at its first write since its snapshot.
    func objectChanged(_ object: ManagedObject) {
        guard let id = object.objectID, entries[id]?.object === object else { return }
        changed[ObjectIdentifier(object)] = object
    }

    /// The changed objects are saved or rolled back: the registry holds them weakly again.
    func clearChanged() {
        changed.removeAll(keepingCapacity: true)
    }

    /// Forgets every object.
    package func removeAll() {
        for entry in entries.values { entry.object?.registry = nil }
        entries.removeAll()
        retained.removeAll()
        changed.removeAll()
        dead = 0
    }

    /// Drops the entries of objects that are gone.
    private func sweep() {
        entries = entries.filter { $0.value.object != nil }
        dead = 0
    }

    package init() {
    }
}
