import BatchRunStore
import Synchronization

/// A row registered in a context: the values as read (its snapshot) and as changed.
///
/// Objects are not Sendable: they live in their context's isolation, like Core Data's managed
/// objects. Pass `objectID` to another context instead.
///
/// ```swift
/// try await context.perform { context in
///     for session in try context.fetch(FetchRequest(entity: "Session", where: "status = 'open'")) {
///         try session.set("status", to: "stale")
///     }
///     try context.save()
/// }
/// ```
public final class ManagedObject {
    public let entity: Entity
    /// Nil for an inserted object whose key SQLite assigns at save.
    public private(set) var objectID: ObjectID?
    /// Values as read from the store, in column order; nil for an inserted object.
    public internal(set) var snapshot: [StoreValue]?
    /// Current values, in column order.
    public internal(set) var values: [StoreValue]
    public internal(set) var isDeleted = false
    /// Columns given a value since the object was inserted; an insert writes only these, so
    /// the others get their defaults.
    /// In column order.
    private(set) var assignedColumns: [Int] = []
    /// The registry of the context the object is registered in, told of the object's first
    /// write since its snapshot (so a save looks at changed objects only); nil when the object
    /// is not registered (an insert not yet saved, or an object its context forgot).
    package weak var registry: ObjectRegistry?
    /// The `@Model` instance over this object (BatchRunModels), so that each row has one in a
    /// context; held weakly (the instance holds the object).
    package weak var model: AnyObject?
    /// Set by record updates (`Context.update(_:)`) on an object no `set` changed since its
    /// snapshot: the save checks only these columns (and the key) against the snapshot, so a
    /// column another context changed that no record update touched is left as saved there.
    /// Nil: the whole row is checked, as for every object changed with `set`.
    private(set) var checkedColumns: [Int]?
    /// The snapshot as read, kept while record updates hold in it the values their records
    /// were fetched with (`rollback` gives the object back this one).
    private(set) var readSnapshot: [StoreValue]?

    deinit {
        registry?.objectDied()
    }

    /// `changed` says the values may differ from the snapshot (a fetch that assigned columns).
    package init(entity: Entity, values: [StoreValue], snapshot: [StoreValue]?, id: ObjectID? = nil, changed: Bool = false) {
        self.entity = entity
        self.values = values
        self.snapshot = snapshot
        self.written = changed
        self.objectID = id ?? (snapshot == nil ? Self.keyIfComplete(entity, values) : ObjectID(entity: entity.name, key: Self.key(entity, values)))
    }

    /// The value of a column; a column the entity does not have throws `ContextError.unknownColumn`.
    ///
    /// ```swift
    /// let status = try session["status"].string
    /// ```
    public subscript(column: String) -> StoreValue {
        get throws {
            guard let index = index(of: column) else { throw ContextError.unknownColumn(entity.name, column) }
            return values[index]
        }
    }

    /// Sets a column's value, marking the object updated. A column the entity does not have
    /// throws `ContextError.unknownColumn`, a value its type does not hold (text into a `real`
    /// column) `ContextError.wrongType`; either changes nothing. An integer given to a `real`
    /// column is stored as a real.
    ///
    /// ```swift
    /// try session.set("status", to: "stale")
    /// ```
    public func set(_ column: String, to value: StoreValue) throws {
        guard let index = index(of: column) else { throw ContextError.unknownColumn(entity.name, column) }
        self[index] = try entity.fitting(value, at: index)
    }

    /// A new object with `values` given to the columns in `assigned`.
    package init(inserting entity: Entity, values: [StoreValue], assigned: [Int]) {
        self.entity = entity
        self.values = values
        self.snapshot = nil
        self.written = true
        self.assignedColumns = assigned
        self.objectID = Self.keyIfComplete(entity, values)
    }

    /// The value of the column at `index` in `entity.columns`.
    package subscript(index: Int) -> StoreValue {
        get { values[index] }
        set {
            values[index] = newValue
            checkedColumns = nil
            if !written {
                written = true
                if snapshot != nil { registry?.objectChanged(self) }
            }
            if snapshot == nil {
                if let at = assignedColumns.firstIndex(where: { $0 >= index }) {
                    if assignedColumns[at] != index { assignedColumns.insert(index, at: at) }
                } else {
                    assignedColumns.append(index)
                }
                let id = Self.keyIfComplete(entity, values)
                if id != objectID, objectID != nil || id != nil { Self.insertKeyChanges.add(1, ordering: .relaxed) }
                objectID = id
            }
        }
    }

    /// Counts keys set on unsaved inserts (in any context): a context's index of its inserts by
    /// key (`ContextCore.pendingInsert`) is rebuilt when it moved. Atomic: contexts run on
    /// different threads; rare (only a `set` of a key column after the insert counts).
    static let insertKeyChanges = Atomic<Int>(0)

    /// True for an inserted object, or one whose values differ from its snapshot.
    public var hasChanges: Bool {
        isDeleted || (snapshot.map { written && $0 != values } ?? true)
    }

    /// Set by the first write to a value, so objects only read skip comparing.
    private var written = false

    /// Deleted, inserted, or given a value since read (whether or not it differs).
    var wasWritten: Bool { isDeleted || written || snapshot == nil }

    /// Columns whose value differs from the snapshot (every column for an inserted object).
    package var changedColumns: [Int] {
        guard let snapshot else { return Array(values.indices) }
        return values.indices.filter { values[$0] != snapshot[$0] }
    }

    package func index(of column: String) -> Int? {
        entity.position(ofColumn: column)
    }

    /// Takes the assigned columns of `changed` (values computed in a fetch) as changes.
    package func assign(_ changed: [StoreValue], columns: [Int]) {
        var values = self.values
        for column in columns { values[column] = changed[column] }
        self.values = values
        checkedColumns = nil
        if !written {
            written = true
            registry?.objectChanged(self)
        }
    }

    package func refresh(with row: [StoreValue]) {
        snapshot = row
        values = row
        written = false
        checkedColumns = nil
        readSnapshot = nil
    }

    /// A record update of a stored row: `columns` (those the record changed from `fetched`, the
    /// row as the record was fetched) take the record's `values`, and the save checks each
    /// against its fetched value, not against the row as read since (a column the context had
    /// already changed keeps its snapshot). Only these columns are checked when nothing but
    /// record updates changed the object.
    package func update(fromRecord values: [StoreValue], columns: [Int], fetched: [StoreValue]) {
        guard var snapshot else { return }
        let recordsOnly = !hasChanges || checkedColumns != nil
        let checked = checkedColumns ?? []
        var patched = false
        for index in columns where self.values[index] == snapshot[index] && snapshot[index] != fetched[index] {
            if readSnapshot == nil { readSnapshot = snapshot }
            snapshot[index] = fetched[index]
            patched = true
        }
        if patched { self.snapshot = snapshot }
        for index in columns where self.values[index] != values[index] { self[index] = values[index] }
        if !written {   // no value differed from the context's, but the snapshot did
            written = true
            registry?.objectChanged(self)
        }
        checkedColumns = recordsOnly ? Array(Set(checked).union(columns)).sorted() : nil
    }

    func assignID(_ id: ObjectID) {
        objectID = id
    }

    package static func key(_ entity: Entity, _ values: [StoreValue]) -> [StoreValue] {
        entity.primaryKeyIndexes.map { values[$0] }
    }

    static func keyIfComplete(_ entity: Entity, _ values: [StoreValue]) -> ObjectID? {
        let keyIndexes = entity.primaryKeyIndexes
        if keyIndexes.count == 1 {
            let value = values[keyIndexes[0]]
            return value == .null ? nil : ObjectID(entity: entity.name, single: value)
        }
        let key = key(entity, values)
        return key.contains(.null) ? nil : ObjectID(entity: entity.name, key: key)
    }
}
