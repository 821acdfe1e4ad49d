import BatchRunStore

/// Records through a context: each maps onto the object of its row (an insert with its key
/// given onto a waiting row until an object is asked for, `PendingRecordRows`), so inserts,
/// updates and deletes are tracked, type-checked, saved and conflict-checked as objects' are.
extension ContextCore {
    /// The encoder of `R`'s records: the context's own, kept for the last record type (it
    /// learns the type's key order), or a new one while that one is busy (a record encoding
    /// another through this context).
    package func encoder<R: Record>(for type: R.Type) throws -> RecordEncoder {
        if let encoder = recordEncoder, encoder.recordType == R.self, !encoder.inUse { return encoder }
        let encoder = RecordEncoder(entity: try entity(of: R.self), recordType: R.self)
        if !(recordEncoder?.inUse ?? false) {
            encoder.keepsContainer = true
            recordEncoder = encoder
        }
        return encoder
    }

    /// The entity of `R`: `ContextError.unknownEntity` when the model has none of that name.
    package func entity<R: Record>(of type: R.Type) throws -> Entity {
        guard let entity = store.model[R.entity] else { throw ContextError.unknownEntity(R.entity) }
        return entity
    }

    /// The rows of `request` as records of `R` (the request must be of `R`'s entity), each
    /// row's values kept in `fetchedRecords`. With `pinning`, the context holds their objects
    /// until its next save, rollback or reset.
    package func fetch<R: Record>(_ request: FetchRequest, as type: R.Type, pinning: Bool) throws -> [R] {
        let entity = try entity(of: R.self)
        try Self.check(request, of: R.self, entity: entity)
        let objects = try fetch(request)
        fetchedRecords.reserveCapacity(fetchedRecords.count + objects.count)
        if pinning { pinned.reserveCapacity(pinned.count + objects.count) }
        for object in objects {
            // The snapshot: the row as read, or the base of the object's unsaved changes.
            guard let id = object.objectID, let snapshot = object.snapshot else { continue }
            fetchedRecords[id] = snapshot
            if pinning { pinned[id] = object }
        }
        return try Self.records(of: objects, as: R.self, entity: entity)
    }

    /// Keeps the rows a fetch read off the context's isolation as the fetched values of their
    /// records (`changed`: rows with unsaved changes here, whose base is their object's snapshot).
    func keepFetched(_ fetched: [ObjectID: [StoreValue]], changed: [ObjectID]) {
        // The smaller into the larger (a large fetch costs the main actor no rehash), newer winning.
        if fetched.count > fetchedRecords.count {
            let older = fetchedRecords
            fetchedRecords = fetched
            fetchedRecords.merge(older) { newer, _ in newer }
        } else {
            fetchedRecords.merge(fetched) { _, newer in newer }
        }
        for id in changed {
            if let snapshot = registered[id]?.snapshot { fetchedRecords[id] = snapshot }
        }
    }

    /// A request of another entity than the record's is a mismatch, not a wrong read.
    package static func check<R: Record>(_ request: FetchRequest, of type: R.Type, entity: Entity) throws {
        guard request.entity.lowercased() == entity.name.lowercased() else {
            throw ContextError.recordMismatch(record: String(describing: R.self), entity: entity.name, column: "(the request)",
                                              problem: "the request is of entity \(request.entity); make it with FetchRequest(\(R.self).self)")
        }
    }

    package static func records<R: Record>(of objects: [ManagedObject], as type: R.Type, entity: Entity) throws -> [R] {
        var records: [R] = []
        records.reserveCapacity(objects.count)
        for object in objects { records.append(try RecordDecoder.record(R.self, from: object.values, entity: entity)) }
        return records
    }

    /// The rows of `request` as records, read and decoded off the context's isolation (the main
    /// context's fetch): nothing is registered. Rows whose IDs are in `changed` (objects with
    /// unsaved changes in the context) are listed by index, to be decoded from those objects.
    package static func readRecords<R: Record>(_ request: FetchRequest, as type: R.Type, store: Store, changed: Set<ObjectID>) async throws
        -> (records: [R], changed: [(index: Int, id: ObjectID)], fetched: [ObjectID: [StoreValue]]) {
        if let failure = request.failure { throw failure }
        guard let entity = store.model[R.entity] else { throw ContextError.unknownEntity(R.entity) }
        try check(request, of: R.self, entity: entity)
        let assigned = try assignedIndexes(request, entity: entity)
        let keyIndexes = entity.primaryKeyIndexes
        do {
            return try await store.backend.read { db in
                var records: [R] = [], found: [(index: Int, id: ObjectID)] = [], fetched: [ObjectID: [StoreValue]] = [:]
                try db.forEachRow(try db.prepare(request.sql(for: entity)), named: request.arguments(), positional: [],
                                  split: entity.columns.count, assigned: assigned) { values, computed in
                    let id = keyIndexes.count == 1 ? ObjectID(entity: entity.name, single: values[keyIndexes[0]])
                                                   : ObjectID(entity: entity.name, key: keyIndexes.map { values[$0] })
                    if !changed.isEmpty, changed.contains(id) { found.append((records.count, id)) }
                    fetched[id] = values
                    records.append(try RecordDecoder.record(R.self, from: computed, entity: entity))
                }
                return (records, found, fetched)
            }
        } catch let error as ContextError {
            throw error
        } catch {
            throw DatabaseFailure.publicError(error)
        }
    }

    /// The IDs of the objects with unsaved changes.
    var changedIDs: Set<ObjectID> {
        Set(registered.changed.values.compactMap { $0.hasChanges ? $0.objectID : nil })
    }

    /// The record of the registered object with `id`, as changed; nil when it is not registered.
    func changedRecord<R: Record>(_ id: ObjectID, as type: R.Type) throws -> R? {
        guard let object = registered[id] else { return nil }
        return try RecordDecoder.record(R.self, from: object.values, entity: object.entity)
    }

    /// A new row from `record`, saved with the next `save()`: the columns it gives, each
    /// type-checked; a NULL primary key (a nil `id`) is left for the store to assign.
    package func insert<R: Record>(_ record: R) throws {
        let encoder = try encoder(for: R.self)
        let entity = encoder.entity
        let encoded = try encoder.encodeRow(record)
        if !entity.primaryKeyIndexes.contains(where: { encoder.values[$0] == .null }) {
            insertRecordRow(encoder.values, given: encoded, entity: entity)   // a row until an object is asked for
            encoder.clearRow(encoded)
            return
        }
        // A key the store assigns: an object now (its insert is saved alone, the key read back).
        let values = encoder.takeRow()
        var given = encoded.filter { index in !(entity.primaryKeyIndexes.contains(index) && values[index] == .null) }
        // Inserts of one shape share one list of given columns (the writer groups them by it).
        if given == lastRecordShape { given = lastRecordShape } else { lastRecordShape = given }
        insert(ManagedObject(inserting: entity, values: values, assigned: given))
    }

    /// Gives the object of `record`'s row (an unsaved insert, the registered object, or the row
    /// read now) the columns the record changed from the row as it was fetched (`fetchedRecords`;
    /// a record this context did not fetch, from the row as the context holds it), each checked
    /// at the save against its fetched value. Other columns are left as they are. An unsaved
    /// insert takes every property.
    package func update<R: Record>(_ record: R) throws {
        let encoder = try encoder(for: R.self)
        let entity = encoder.entity
        let (values, given) = try encoder.row(of: record)
        let id = try Self.id(of: values, given: given, entity: entity, record: R.self)
        guard let object = try object(with: id) else { throw ContextError.recordNotFound(id) }
        guard let snapshot = object.snapshot else {
            for index in given where object.values[index] != values[index] { object[index] = values[index] }
            return
        }
        var fetched = fetchedRecords[id] ?? snapshot
        let changed = given.filter { values[$0] != fetched[$0] }
        guard !changed.isEmpty else { return }
        object.update(fromRecord: values, columns: changed, fetched: fetched)
        for index in changed { fetched[index] = values[index] }
        fetchedRecords[id] = fetched
    }

    /// Marks `record`'s row deleted; the row goes with the next `save()`. A row that is gone
    /// already is nothing to delete.
    package func delete<R: Record>(_ record: R) throws {
        let encoder = try encoder(for: R.self)
        let entity = encoder.entity
        let (values, given) = try encoder.row(of: record)
        let id = try Self.id(of: values, given: given, entity: entity, record: R.self)
        fetchedRecords[id] = nil
        if let object = try object(with: id) { delete(object) }
    }

    private func object(with id: ObjectID) throws -> ManagedObject? {
        if let pending = pendingInsert(with: id) { return pending }
        return try existingObject(with: id)
    }

    /// The ID of a record's row: every primary-key column given, none NULL.
    private static func id<R: Record>(of values: [StoreValue], given: [Int], entity: Entity, record: R.Type) throws -> ObjectID {
        for index in entity.primaryKeyIndexes where !given.contains(index) || values[index] == .null {
            throw ContextError.recordMismatch(record: String(describing: R.self), entity: entity.name, column: entity.columns[index].name,
                                              problem: "the primary key is NULL or missing, so the record names no row; fetch it, or give its key")
        }
        return ObjectID(entity: entity.name, key: entity.primaryKeyIndexes.map { values[$0] })
    }
}
