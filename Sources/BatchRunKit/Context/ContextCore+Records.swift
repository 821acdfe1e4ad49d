/// Records through a context: each maps onto the object of its row, so inserts, updates and
/// deletes are tracked, type-checked, saved and conflict-checked as objects' are.
extension ContextCore {
    /// The entity of `R`: `ContextError.unknownEntity` when the model has none of that name.
    func entity<R: Record>(of type: R.Type) throws -> Entity {
        guard let entity = store.model[R.entity] else { throw ContextError.unknownEntity(R.entity) }
        return entity
    }

    /// The rows of `request` as records of `R` (the request must be of `R`'s entity). With
    /// `pinning`, the context holds their objects until its next save, rollback or reset.
    func fetch<R: Record>(_ request: FetchRequest, as type: R.Type, pinning: Bool) throws -> [R] {
        let entity = try entity(of: R.self)
        try Self.check(request, of: R.self, entity: entity)
        let objects = try fetch(request)
        if pinning { pinned += objects }
        return try Self.records(of: objects, as: R.self, entity: entity)
    }

    /// A request of another entity than the record's is a mismatch, not a wrong read.
    static func check<R: Record>(_ request: FetchRequest, of type: R.Type, entity: Entity) throws {
        guard request.entity.lowercased() == entity.name.lowercased() else {
            throw ContextError.recordMismatch(record: String(describing: R.self), entity: entity.name, column: "(the request)",
                                              problem: "the request is of entity \(request.entity); make it with FetchRequest(\(R.self).self)")
        }
    }

    static func records<R: Record>(of objects: [ManagedObject], as type: R.Type, entity: Entity) throws -> [R] {
        var records: [R] = []
        records.reserveCapacity(objects.count)
        for object in objects { records.append(try RecordDecoder.record(R.self, from: object.values, entity: entity)) }
        return records
    }

    /// The rows of `request` as records, read and decoded off the context's isolation (the main
    /// context's fetch): nothing is registered. Rows whose IDs are in `changed` (objects with
    /// unsaved changes in the context) are listed by index, to be decoded from those objects.
    static func readRecords<R: Record>(_ request: FetchRequest, as type: R.Type, store: Store,
                                       changed: Set<ObjectID>) async throws -> (records: [R], changed: [(index: Int, id: ObjectID)]) {
        if let failure = request.failure { throw failure }
        guard let entity = store.model[R.entity] else { throw ContextError.unknownEntity(R.entity) }
        try check(request, of: R.self, entity: entity)
        let assigned = try assignedIndexes(request, entity: entity)
        let keyIndexes = entity.primaryKeyIndexes
        do {
            return try await store.backend.read { db in
                var records: [R] = [], found: [(index: Int, id: ObjectID)] = []
                try db.forEachRow(try db.prepare(request.sql(for: entity)), named: request.arguments(), positional: [],
                                  split: entity.columns.count, assigned: assigned) { values, computed in
                    if !changed.isEmpty {
                        let id = ObjectID(entity: entity.name, key: keyIndexes.map { values[$0] })
                        if changed.contains(id) { found.append((records.count, id)) }
                    }
                    records.append(try RecordDecoder.record(R.self, from: computed, entity: entity))
                }
                return (records, found)
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
    func insert<R: Record>(_ record: R) throws {
        let entity = try entity(of: R.self)
        let row = try RecordEncoder.row(of: record, entity: entity)
        let values = row.values
        var given = row.given
        if entity.primaryKeyIndexes.contains(where: { values[$0] == .null }) {
            given.removeAll { index in entity.primaryKeyIndexes.contains(index) && values[index] == .null }
        }
        // Inserts of one shape share one list of given columns (the writer groups them by it).
        if given == lastRecordShape { given = lastRecordShape } else { lastRecordShape = given }
        insert(ManagedObject(inserting: entity, values: values, assigned: given))
    }

    /// Gives the object of `record`'s row the record's values: the registered object (checked at
    /// the save against the row as it was read), an unsaved insert, or the row read now.
    func update<R: Record>(_ record: R) throws {
        let entity = try entity(of: R.self)
        let (values, given) = try RecordEncoder.row(of: record, entity: entity)
        let id = try Self.id(of: values, given: given, entity: entity, record: R.self)
        guard let object = try object(with: id) else { throw ContextError.recordNotFound(id) }
        for index in given where object.values[index] != values[index] { object[index] = values[index] }
    }

    /// Marks `record`'s row deleted; the row goes with the next `save()`. A row that is gone
    /// already is nothing to delete.
    func delete<R: Record>(_ record: R) throws {
        let entity = try entity(of: R.self)
        let (values, given) = try RecordEncoder.row(of: record, entity: entity)
        let id = try Self.id(of: values, given: given, entity: entity, record: R.self)
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
