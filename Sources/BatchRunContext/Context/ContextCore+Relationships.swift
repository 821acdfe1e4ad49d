import BatchRunStore

/// Relationships in a context: related objects read when first asked for (faulting), and the
/// context's own objects kept true to what a save's delete rules wrote.
extension ContextCore {
    /// The to-one `name` of `object`: the row its column refers to, as this context holds it
    /// (registered, or inserted and unsaved), else read; nil for NULL or a row that is gone.
    package func relatedObject(_ name: String, of object: ManagedObject) throws -> ManagedObject? {
        guard let link = store.model.toOne(name, of: object.entity) else {
            throw ContextError.unknownRelationship(object.entity.name, name)
        }
        let key = object.values[link.column]
        guard key != .null else { return nil }
        let id = ObjectID(entity: link.relationship.destination, single: key)
        return try pendingInsert(with: id) ?? existingObject(with: id)
    }

    /// The to-many `name` of `object` (the inverse of a to-one): the rows referring to it, read
    /// in one statement in key order, as this context sees them: its unsaved changes count (an
    /// object pointed elsewhere or deleted is left out; one pointed here, or inserted, comes last).
    ///
    /// `among`: the rows read ahead for several objects at once (`readAhead(_:of:)`), looked at
    /// instead of reading.
    package func relatedObjects(_ name: String, of object: ManagedObject, among readAhead: [ManagedObject]? = nil) throws -> [ManagedObject] {
        guard let link = store.model.toMany(name, of: object.entity) else {
            throw ContextError.unknownRelationship(object.entity.name, name)
        }
        guard let key = object.objectID?.singleKey else { return [] }
        let column = link.column
        var related: [ManagedObject]
        if let readAhead {
            related = readAhead.filter { !$0.isDeleted && $0.values[column] == key }
        } else {
            var request = FetchRequest(entity: link.source.name, where: "\(SQL.quote(link.source.columns[column].name)) = :_batchrun_key")
            request.params["_batchrun_key"] = key
            related = try fetch(request).filter { !$0.isDeleted && $0.values[column] == key }
        }
        var found = Set(related.map(ObjectIdentifier.init))
        for other in Array(registered.changed.values) + unsavedInserts
        where other.entity.name == link.source.name && !other.isDeleted && other.values[column] == key {
            if found.insert(ObjectIdentifier(other)).inserted { related.append(other) }
        }
        return related
    }

    /// The rows of the to-many `name` of every object given, read in one statement per 30,000
    /// keys, in key order: what `relatedObjects(_:of:among:)` then looks at for each of them.
    package func readAhead(_ name: String, of objects: [ManagedObject]) throws -> [ManagedObject] {
        guard let first = objects.first, let link = store.model.toMany(name, of: first.entity) else { return [] }
        let keys = Array(Set(objects.compactMap { $0.objectID?.singleKey }))
        var rows: [ManagedObject] = []
        var start = 0
        while start < keys.count {
            let chunk = keys[start..<min(start + 30_000, keys.count)]
            var request = FetchRequest(entity: link.source.name)
            request.whereClause = "\(SQL.quote(link.source.columns[link.column].name)) IN (" + chunk.indices.map { ":_batchrun_k\($0 - start)" }.joined(separator: ", ") + ")"
            for (offset, key) in chunk.enumerated() { request.params["_batchrun_k\(offset)"] = key }
            rows += try fetch(request)
            start += chunk.count
        }
        return rows
    }

    /// After a save whose delete rules wrote rows this context holds: objects deleted by a
    /// cascade are marked deleted and forgotten; objects nullified take NULL, as read and as
    /// changed (an object of this save then keeps NULL as saved).
    func apply(_ effects: DeleteRuleEnforcer.Effects) {
        for id in effects.deleted {
            fetchedRecords[id] = nil
            guard let object = registered[id] else { continue }
            object.isDeleted = true
            registered.remove(id, ifItIs: object)
        }
        for (id, column) in effects.nullified {
            guard let object = registered[id] else { continue }
            object.values[column] = .null
            object.snapshot?[column] = .null
        }
    }
}
