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
    weak var registry: ObjectRegistry?

    deinit {
        registry?.objectDied()
    }

    /// `changed` says the values may differ from the snapshot (a fetch that assigned columns).
    init(entity: Entity, values: [StoreValue], snapshot: [StoreValue]?, id: ObjectID? = nil, changed: Bool = false) {
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
    init(inserting entity: Entity, values: [StoreValue], assigned: [Int]) {
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
                objectID = Self.keyIfComplete(entity, values)
            }
        }
    }

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

    func index(of column: String) -> Int? {
        entity.position(ofColumn: column)
    }

    /// Takes the assigned columns of `changed` (values computed in a fetch) as changes.
    func assign(_ changed: [StoreValue], columns: [Int]) {
        var values = self.values
        for column in columns { values[column] = changed[column] }
        self.values = values
        if !written {
            written = true
            registry?.objectChanged(self)
        }
    }

    func refresh(with row: [StoreValue]) {
        snapshot = row
        values = row
        written = false
    }

    func assignID(_ id: ObjectID) {
        objectID = id
    }

    static func key(_ entity: Entity, _ values: [StoreValue]) -> [StoreValue] {
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
