import BatchRunContext
import BatchRunStore
import Synchronization

/// What ties a model instance to its row: the context's object once the instance is inserted
/// or fetched (its reads and writes go to the object, whose changes the context tracks and
/// `save()` writes), nothing before (the values wait in the instance). `@Model`'s property
/// accessors call `value(of:in:unattached:)` and `setValue(_:of:in:unattached:)`.
///
/// ```swift
/// let flight = Flight(number: "BA117", departs: Date())   // flight.modelBacking.isInserted == false
/// try context.insert(flight)                     // true: flight.delay = 5 changes the row's object
/// ```
public final class ModelBacking {
    /// The row's object in its context; nil before the insert.
    package private(set) var object: ManagedObject?
    /// The context the object is in, for the relationships read through it (held: the object
    /// holds its model weakly, so there is no cycle).
    package private(set) var core: ContextCore?

    /// An instance's backing before it has a row.
    ///
    /// ```swift
    /// public private(set) var modelBacking = ModelBacking()   // as @Model writes it
    /// ```
    public init() {
        group = nil
    }

    /// The rows fetched with this one: its to-ones are read for all of them at once.
    private let group: FetchGroup?

    package init(object: ManagedObject, core: ContextCore, group: FetchGroup? = nil) {
        self.object = object
        self.core = core
        self.group = group
    }

    /// Whether the instance has a row in a context (inserted or fetched).
    public var isInserted: Bool { object != nil }

    /// Whether the instance's row has changes its context has not saved.
    public var hasChanges: Bool { object?.hasChanges ?? false }

    package func attach<Root: PersistentModel>(_ object: ManagedObject, core: ContextCore, model: Root) {
        self.object = object
        self.core = core
        attachedAtDiscards = core.discards
        object.model = model
        model.clearUnsavedValues()
    }

    /// The context's rollbacks and resets when the instance was inserted: one since dropped the insert.
    private var attachedAtDiscards = 0

    /// The row's object as the context holds it now. After a save that met a conflict on it, or
    /// a `reset()`, the context no longer holds the object this instance had; the row's
    /// registered object is found again (read if need be), so reads are the row's and writes
    /// are saved. An insert not saved yet, a deleted row or a row gone stays as it is.
    package func current() -> ManagedObject? {
        guard let object, let core, object.snapshot != nil, !object.isDeleted, let id = object.objectID,
              core.registered[id] !== object else { return object }
        guard let found = try? core.existingObject(with: id) else { return object }
        found.model = object.model
        self.object = found
        return found
    }

    // MARK: columns

    /// A column's value: the row's, else the one the instance was given.
    ///
    /// ```swift
    /// modelBacking.value(of: "delay", in: Self.self, unattached: _delay)   // the getter of Flight.delay
    /// ```
    public func value<Root: PersistentModel, Value: ColumnValue>(of property: String, in root: Root.Type, unattached: Value?) -> Value {
        guard let object = current() else { return Self.given(unattached, property, root) }
        let stored = object.values[Self.columnIndex(property, root)]
        guard let value = Value(storeValue: stored) else {
            preconditionFailure("\(ModelError.storedValue(model: "\(root)", property: property, key: object.objectID?.singleKey ?? .null, value: stored))")
        }
        return value
    }

    /// Sets a column's value: on the row's object (a change the save writes), else in the instance.
    ///
    /// ```swift
    /// modelBacking.setValue(newValue, of: "delay", in: Self.self, unattached: &_delay)   // the setter of Flight.delay
    /// ```
    public func setValue<Root: PersistentModel, Value: ColumnValue>(_ value: Value, of property: String, in root: Root.Type, unattached: inout Value?) {
        guard let object = current() else {
            unattached = .some(value)
            return
        }
        Self.set(object, Self.columnIndex(property, root), value.storeValue)
    }

    // MARK: to-one

    /// A to-one relationship: the related model (its row read when first asked for), or nil.
    ///
    /// ```swift
    /// modelBacking.value(of: "airline", in: Self.self, unattached: _airline)   // the getter of Flight.airline
    /// ```
    public func value<Root: PersistentModel, Destination: PersistentModel>(of property: String, in root: Root.Type,
                                                                           unattached: Destination??) -> Destination? {
        guard let object = current() else { return Self.given(unattached, property, root) }
        return related(property, of: object, root)
    }

    /// A to-one relationship that is never nil.
    ///
    /// ```swift
    /// modelBacking.value(of: "airline", in: Self.self, unattached: _airline)   // the getter of `var airline: Airline`
    /// ```
    public func value<Root: PersistentModel, Destination: PersistentModel>(of property: String, in root: Root.Type,
                                                                           unattached: Destination?) -> Destination {
        guard let object = current() else { return Self.given(unattached, property, root) }
        guard let found: Destination = related(property, of: object, root) else {
            preconditionFailure("\(root).\(property) is never nil, but its row \(object.objectID?.singleKey ?? .null) points at no \(Destination.self)")
        }
        return found
    }

    /// Sets a to-one relationship: the row's column takes the other model's key (a model not
    /// inserted yet is inserted into this context first).
    ///
    /// ```swift
    /// modelBacking.setValue(newValue, of: "airline", in: Self.self, unattached: &_airline)   // the setter of Flight.airline
    /// ```
    public func setValue<Root: PersistentModel, Destination: PersistentModel>(_ value: Destination?, of property: String, in root: Root.Type,
                                                                              unattached: inout Destination??) {
        guard let object = current(), let core else {
            unattached = .some(value)
            return
        }
        let key = value.map { Self.key(of: $0, core: core, for: "\(root).\(property)") } ?? .null
        Self.set(object, Self.columnIndex(property, root), key)
    }

    /// Sets a to-one relationship that is never nil.
    ///
    /// ```swift
    /// modelBacking.setValue(newValue, of: "airline", in: Self.self, unattached: &_airline)   // the setter of `var airline: Airline`
    /// ```
    public func setValue<Root: PersistentModel, Destination: PersistentModel>(_ value: Destination, of property: String, in root: Root.Type,
                                                                              unattached: inout Destination?) {
        guard let object = current(), let core else {
            unattached = .some(value)
            return
        }
        Self.set(object, Self.columnIndex(property, root), Self.key(of: value, core: core, for: "\(root).\(property)"))
    }

    // MARK: to-many

    /// A to-many relationship: the models whose to-one points here, as this context sees them.
    ///
    /// ```swift
    /// modelBacking.value(of: "flights", in: Self.self, unattached: _flights)   // the getter of Airline.flights
    /// ```
    public func value<Root: PersistentModel, Destination: PersistentModel>(of property: String, in root: Root.Type,
                                                                           unattached: [Destination]?) -> [Destination] {
        guard let object = current() else { return unattached ?? [] }
        do {
            return try readRelatedMany(property, of: object)
        } catch {
            preconditionFailure("\(root).\(property) could not be read: \(error)")
        }
    }

    /// Sets a to-many relationship: each model given points here (inserted first if new), each
    /// one that pointed here and is not given points nowhere.
    ///
    /// ```swift
    /// modelBacking.setValue(newValue, of: "flights", in: Self.self, unattached: &_flights)   // the setter of Airline.flights
    /// ```
    public func setValue<Root: PersistentModel, Destination: PersistentModel>(_ value: [Destination], of property: String, in root: Root.Type,
                                                                              unattached: inout [Destination]?) {
        guard let object = current(), let core else {
            unattached = .some(value)
            return
        }
        guard let schemaProperty = Root.modelSchema.property(named: property), case .toMany(_, let inversePath, _) = schemaProperty.kind,
              let inverse = Destination.modelSchema.property(for: inversePath),
              let column = Destination.modelSchema.columnIndex(of: inverse.name) else {
            preconditionFailure("\(root).\(property) is not a to-many relationship of the schema")
        }
        let key = Self.key(of: object, for: "\(root).\(property)")
        let kept = Set(value.map { ObjectIdentifier($0) })
        do {
            for old in try core.relatedObjects(property, of: object) {
                let model: Destination = ModelBacking.model(for: old, core: core)
                if !kept.contains(ObjectIdentifier(model)) { Self.set(old, column, .null) }
            }
            for model in value {
                if let related = model.modelBacking.object {
                    Self.set(related, column, key)
                } else {
                    try Self.insertGraph(model, into: core)
                    if let related = model.modelBacking.object { Self.set(related, column, key) }
                }
            }
        } catch {
            preconditionFailure("\(root).\(property) could not be set: \(error)")
        }
    }

    // MARK: inserting, reading

    /// A to-one whose model was being inserted further up (a cycle: `a.manager = b`,
    /// `b.manager = a`): its column is set once that model has its row.
    struct PendingLink {
        let object: ManagedObject
        let column: Int
        let target: any PersistentModel
        let relationship: String
    }

    /// Inserts `model` into `core` with the models its relationships hold that have no row
    /// yet: first every key is checked (nothing is inserted when one is missing), then the
    /// rows, then the to-ones of a cycle.
    package static func insertGraph<Root: PersistentModel>(_ model: Root, into core: ContextCore) throws {
        if Root.modelSchema.hasRelationships || model.modelBacking.object != nil {
            var checked = Set<ObjectIdentifier>()
            try checkKeys(model, core: core, checked: &checked)
        }
        var links: [PendingLink] = []
        try model.modelBacking.insert(model, into: core, links: &links)
        for link in links {
            guard let key = link.target.modelBacking.object?.objectID?.singleKey else {
                throw ModelError.keyNotAssigned(model: "\(type(of: link.target))", relationship: link.relationship)
            }
            set(link.object, link.column, key)
        }
    }

    /// Throws before anything is inserted: a model of another context, or a model a to-one
    /// points at (or a to-many belongs to) whose key the store would assign at the save.
    private static func checkKeys<Root: PersistentModel>(_ model: Root, core: ContextCore, checked: inout Set<ObjectIdentifier>) throws {
        guard checked.insert(ObjectIdentifier(model)).inserted else { return }
        let backing = model.modelBacking
        if backing.object != nil {
            guard backing.core === core else { throw ModelError.otherContext(Root.modelSchema.entityName) }
            return
        }
        let schema = Root.modelSchema
        for property in schema.properties {
            switch property.kind {
            case .column:
                continue
            case .toOne:
                for related in property.unsavedModels(model) {
                    try checkRelated(related, core: core, checked: &checked, relationship: "\(schema.entityName).\(property.name)")
                }
            case .toMany:
                let children = property.unsavedModels(model)
                if !children.isEmpty, let key = schema.key, key.unsavedValue(model) == .null {
                    throw ModelError.keyNotAssigned(model: schema.entityName, relationship: "\(schema.entityName).\(property.name)")
                }
                for child in children { try checkRelatedChild(child, core: core, checked: &checked) }
            }
        }
    }

    private static func checkRelatedChild<Child: PersistentModel>(_ child: Child, core: ContextCore, checked: inout Set<ObjectIdentifier>) throws {
        try checkKeys(child, core: core, checked: &checked)
    }

    private static func checkRelated<Destination: PersistentModel>(_ related: Destination, core: ContextCore, checked: inout Set<ObjectIdentifier>,
                                                                   relationship: String) throws {
        let backing = related.modelBacking
        if let object = backing.object, backing.core === core {
            if object.objectID == nil { throw ModelError.keyNotAssigned(model: "\(Destination.self)", relationship: relationship) }
        } else if backing.object == nil, let key = Destination.modelSchema.key, key.unsavedValue(related) == .null {
            throw ModelError.keyNotAssigned(model: "\(Destination.self)", relationship: relationship)
        }
        try checkKeys(related, core: core, checked: &checked)
    }

    /// Inserts the instance's row (and first the models its to-ones point at, then those its
    /// to-manys hold), `setting` columns given by a to-many it is inserted through.
    private func insert<Root: PersistentModel>(_ model: Root, into core: ContextCore, setting: [Int: StoreValue] = [:], links: inout [PendingLink]) throws {
        if let object = current() {
            guard self.core === core else { throw ModelError.otherContext(Root.modelSchema.entityName) }
            let held = object.snapshot != nil || (attachedAtDiscards == core.discards && !core.isDeletedInsert(object))
            if held {
                for (column, value) in setting { Self.set(object, column, value) }
                return
            }
            // Rolled back or reset since: inserted anew with the values it has.
            var values: [String: StoreValue] = [:]
            for (index, column) in object.entity.columns.enumerated() where !(column.isPrimaryKey && object.values[index] == .null) {
                values[column.name] = setting[index] ?? object.values[index]
            }
            attach(try core.insert(into: object.entity.name, values: values), core: core, model: model)
            return
        }
        guard !inserting else { return }
        inserting = true
        defer { inserting = false }
        let schema = Root.modelSchema
        let entity = try Self.entity(of: Root.self, in: core)
        // The row by column, as `insert(into:values:)` makes it, without looking names up.
        var row = [StoreValue](repeating: .null, count: entity.columns.count)
        var assigned: [Int] = []
        var cycles: [(column: Int, target: any PersistentModel, relationship: String)] = []
        var column = 0
        for property in schema.properties where property.hasColumn {
            defer { column += 1 }
            var value: StoreValue
            if let given = setting[column] {
                value = given
            } else if case .toOne = property.kind {
                guard let related = property.unsavedModels(model).first else { continue }
                let relationship = "\(schema.entityName).\(property.name)"
                if related.modelBacking.inserting {
                    cycles.append((column, related, relationship))
                    continue
                }
                try Self.insertRelated(related, into: core, links: &links)
                guard let key = related.modelBacking.object?.objectID?.singleKey else {
                    throw ModelError.keyNotAssigned(model: "\(type(of: related))", relationship: relationship)
                }
                value = key
            } else {
                value = property.unsavedValue(model)
                if property.isKey && value == .null { continue }   // the store assigns it
            }
            row[column] = try entity.fitting(value, at: column)
            assigned.append(column)
        }
        // The to-manys' models, read while the instance still answers from itself.
        let toMany = !schema.hasToMany ? [] : schema.properties.map { property -> (ModelProperty, [any PersistentModel]) in
            guard case .toMany = property.kind else { return (property, []) }
            return (property, property.unsavedModels(model))
        }
        let inserted = ManagedObject(inserting: entity, values: row, assigned: assigned)
        core.insert(inserted)
        attach(inserted, core: core, model: model)
        links += cycles.map { PendingLink(object: inserted, column: $0.column, target: $0.target, relationship: $0.relationship) }
        for (property, children) in toMany {
            guard case .toMany(_, let inversePath, _) = property.kind, !children.isEmpty else { continue }
            guard let key = inserted.objectID?.singleKey else {
                throw ModelError.keyNotAssigned(model: schema.entityName, relationship: "\(schema.entityName).\(property.name)")
            }
            for child in children {
                try Self.insertChild(child, inverse: inversePath, key: key, core: core, links: &links)
            }
        }
    }

    /// Set while the instance's insert is under way, so that a cycle back to it is noticed.
    private var inserting = false

    private static func insertRelated<Destination: PersistentModel>(_ model: Destination, into core: ContextCore, links: inout [PendingLink]) throws {
        try model.modelBacking.insert(model, into: core, links: &links)
    }

    private static func insertChild<Child: PersistentModel>(_ child: Child, inverse: AnyKeyPath, key: StoreValue, core: ContextCore,
                                                            links: inout [PendingLink]) throws {
        guard let inverseProperty = Child.modelSchema.property(for: inverse),
              let column = Child.modelSchema.columnIndex(of: inverseProperty.name) else { return }
        try child.modelBacking.insert(child, into: core, setting: [column: key], links: &links)
    }

    /// The store's entity of a model, checked against the schema: the same number of columns,
    /// each of the property's type (a model of that name made otherwise would be read wrong).
    package static func entity<Root: PersistentModel>(of type: Root.Type, in core: ContextCore) throws -> Entity {
        let schema = Root.modelSchema
        guard let entity = core.store.model[schema.entityName] else { throw ModelError.notInModel(schema.entityName) }
        let store = core.store, model = ObjectIdentifier(Root.self)
        if checkedEntities.withLock({ $0[ObjectIdentifier(store)].map { $0.store === store && $0.models.contains(model) } ?? false }) {
            return entity
        }
        let columns = schema.properties.filter(\.hasColumn)
        // The columns `Model(_:columnNames:)` makes, under one of its naming rules.
        let fits = entity.columns.count == columns.count && [ColumnNaming.asWritten, .snakeCase].contains { naming in
            zip(entity.columns, columns).allSatisfy { column, property in
                switch property.kind {
                case .column(let type, _):
                    return column.type == type && column.name == naming.column(for: property.name)
                case .toOne(let destination, _):
                    guard case .column(let keyType, _)? = destination.modelSchema.key?.kind else { return false }
                    return column.type == keyType && column.name == naming.foreignKey(for: property.name)
                case .toMany:
                    return false
                }
            }
        }
        guard fits else {
            throw ModelError.schema("the store's entity \(schema.entityName) is not the one Model(\(schema.entityName).self) makes: open the store with Model(_:) of the @Model classes")
        }
        checkedEntities.withLock { checked in
            if checked[ObjectIdentifier(store)]?.store !== store { checked[ObjectIdentifier(store)] = CheckedEntities(store: store) }
            checked[ObjectIdentifier(store)]?.models.insert(model)
        }
        return entity
    }

    /// The model classes whose entities were checked against a store (a store's model does not
    /// change). The store is held weakly: another store at the same address is checked afresh.
    private struct CheckedEntities {
        weak var store: Store?
        var models: Set<ObjectIdentifier> = []
    }

    /// What was checked so far, by store, in any context of any thread.
    private static let checkedEntities = Mutex<[ObjectIdentifier: CheckedEntities]>([:])

    /// The model over `object` in its context: the one made before while someone holds it, else a new one.
    package static func model<Model: PersistentModel>(for object: ManagedObject, core: ContextCore, group: FetchGroup? = nil) -> Model {
        if let existing = object.model as? Model { return existing }
        let model = Model(backing: ModelBacking(object: object, core: core, group: group))
        object.model = model
        return model
    }

    private func related<Root: PersistentModel, Destination: PersistentModel>(_ property: String, of object: ManagedObject, _ root: Root.Type) -> Destination? {
        do {
            return try readRelated(property, of: object, root)
        } catch {
            preconditionFailure("\(root).\(property) could not be read: \(error)")
        }
    }

    /// A to-one's model, read as its getter reads it, a failed read thrown.
    package func readRelated<Root: PersistentModel, Destination: PersistentModel>(_ property: String, of object: ManagedObject,
                                                                                  _ root: Root.Type) throws -> Destination? {
        guard let core else { preconditionFailure("\(root).\(property): the context of this \(root) is gone") }
        if let group, let column = Root.modelSchema.columnIndex(of: property) {
            try group.readAhead(property, column: column, destination: Destination.modelSchema.entityName, core: core)
        }
        return try core.relatedObject(property, of: object).map { ModelBacking.model(for: $0, core: core) }
    }

    /// A to-many's models, read as its getter reads them, a failed read thrown.
    package func readRelatedMany<Destination: PersistentModel>(_ property: String, of object: ManagedObject) throws -> [Destination] {
        guard let core else { return [] }
        let readAhead = try group?.readAheadMany(property, of: object, core: core)
        return try core.relatedObjects(property, of: object, among: readAhead).map { ModelBacking.model(for: $0, core: core) }
    }

    private static func given<Root: PersistentModel, Value>(_ value: Value?, _ property: String, _ root: Root.Type) -> Value {
        guard let value else { preconditionFailure("\(root).\(property) was read before it was given a value (give it one in the initializer)") }
        return value
    }

    private static func columnIndex<Root: PersistentModel>(_ property: String, _ root: Root.Type) -> Int {
        guard let index = Root.modelSchema.columnIndex(of: property) else { preconditionFailure("\(root).\(property) is not in the schema") }
        return index
    }

    /// Sets a column as a record update does: the save checks only the columns the models
    /// changed, so another context's change to another column of the row is no conflict
    /// (Core Data's merge by property).
    private static func set(_ object: ManagedObject, _ column: Int, _ value: StoreValue) {
        do {
            let fitted = try object.entity.fitting(value, at: column)
            guard let snapshot = object.snapshot else {
                object[column] = fitted   // an insert not saved yet: all its columns are written
                return
            }
            var values = object.values
            values[column] = fitted
            object.update(fromRecord: values, columns: [column], fetched: snapshot)
        } catch {
            preconditionFailure("\(error)")
        }
    }

    private static func key<Destination: PersistentModel>(of model: Destination, core: ContextCore, for relationship: String) -> StoreValue {
        do {
            try insertGraph(model, into: core)
            guard let key = model.modelBacking.object?.objectID?.singleKey else {
                throw ModelError.keyNotAssigned(model: "\(Destination.self)", relationship: relationship)
            }
            return key
        } catch {
            preconditionFailure("\(error)")
        }
    }

    private static func key(of object: ManagedObject, for relationship: String) -> StoreValue {
        guard let key = object.objectID?.singleKey else {
            preconditionFailure("\(ModelError.keyNotAssigned(model: object.entity.name, relationship: relationship))")
        }
        return key
    }
}
