import BatchRunStore

/// One stored property of a model as `@Model` read it: a column, a to-one relationship (a
/// column holding the other model's key) or a to-many (the other model's to-one pointing
/// here). `@Model` writes these; the initializer chosen by the property's type says which.
///
/// ```swift
/// ModelProperty("delay", \Flight.delay)                                       // a column, real, NULL allowed
/// ModelProperty("airline", \Flight.airline)                                   // to-one
/// ModelProperty("flights", \Airline.flights, deleteRule: .cascade, inverse: \Flight.airline)   // to-many
/// ```
public struct ModelProperty: Sendable {
    /// What the property is stored as.
    ///
    /// ```swift
    /// let airline = Flight.modelSchema.properties.first { $0.name == "airline" }!
    /// if case .toOne(let destination, let acceptsNull) = airline.kind { print(destination, acceptsNull) }   // Airline true
    /// ```
    public enum Kind: Sendable {
        /// A column of this type; `acceptsNull` for an optional.
        case column(ColumnType, acceptsNull: Bool)
        /// A column holding the key of a row of `destination`.
        case toOne(destination: any PersistentModel.Type, acceptsNull: Bool)
        /// The rows of `destination` whose to-one `inverse` points here; `deleteRule` is what
        /// deleting this row does to them (nil: not told, `.nullify`, or `.deny` for an inverse never nil).
        case toMany(destination: any PersistentModel.Type, inverse: AnyKeyPath & Sendable, deleteRule: DeleteRule?)
    }

    /// The Swift property's name.
    public let name: String
    /// The property's key path (`\Flight.delay`), which filters and sorts name it by.
    public let keyPath: AnyKeyPath & Sendable
    /// What it is stored as: a column, a to-one or a to-many.
    public let kind: Kind
    /// Whether it is the primary key (`@Key`).
    public let isKey: Bool
    /// Whether its column's values are unique (`@Unique`).
    public let isUnique: Bool
    /// Whether its column has an index (`@Index`).
    public let isIndexed: Bool
    /// The column's default, from a literal initial value (`var seats: Int = 180`).
    public let defaultValue: StoreValue?
    /// The value of an instance not yet inserted, as stored (a column's), for its insert.
    let unsavedValue: @Sendable (AnyObject) -> StoreValue
    /// Whether a stored value fits the property's type (a NULL in a non-optional does not).
    let fits: @Sendable (StoreValue) -> Bool
    /// The models a relationship of an instance not yet inserted holds, for its insert.
    let unsavedModels: @Sendable (AnyObject) -> [any PersistentModel]

    /// A column.
    ///
    /// ```swift
    /// ModelProperty("seats", \Flight.seats, default: 180)
    /// ```
    public init<Root: PersistentModel, Value: ColumnValue>(_ name: String, _ keyPath: KeyPath<Root, Value> & Sendable, key: Bool = false,
                                                            unique: Bool = false, index: Bool = false, default value: Value? = nil) {
        self.init(name, keyPath, .column(Value.columnType, acceptsNull: Value.acceptsNull), key: key, unique: unique, index: index,
                  default: value.map(\.storeValue),
                  unsavedValue: { ($0 as! Root)[keyPath: keyPath].storeValue },
                  fits: { Value(storeValue: $0) != nil })
    }

    /// A to-one relationship that may be nil.
    ///
    /// ```swift
    /// ModelProperty("airline", \Flight.airline)
    /// ```
    public init<Root: PersistentModel, Destination: PersistentModel>(_ name: String, _ keyPath: KeyPath<Root, Destination?> & Sendable,
                                                                     unique: Bool = false, index: Bool = false) {
        self.init(name, keyPath, .toOne(destination: Destination.self, acceptsNull: true), unique: unique, index: index,
                  unsavedModels: { ($0 as! Root)[keyPath: keyPath].map { [$0] } ?? [] })
    }

    /// A to-one relationship that is never nil.
    ///
    /// ```swift
    /// ModelProperty("airline", \Flight.airline)   // for `var airline: Airline`
    /// ```
    public init<Root: PersistentModel, Destination: PersistentModel>(_ name: String, _ keyPath: KeyPath<Root, Destination> & Sendable,
                                                                     unique: Bool = false, index: Bool = false) {
        self.init(name, keyPath, .toOne(destination: Destination.self, acceptsNull: false), unique: unique, index: index,
                  fits: { $0 != .null }, unsavedModels: { [($0 as! Root)[keyPath: keyPath]] })
    }

    /// A to-many relationship: the models whose to-one `inverse` points here.
    ///
    /// ```swift
    /// ModelProperty("flights", \Airline.flights, deleteRule: .cascade, inverse: \Flight.airline)
    /// ```
    public init<Root: PersistentModel, Destination: PersistentModel>(_ name: String, _ keyPath: KeyPath<Root, [Destination]> & Sendable,
                                                                     deleteRule: DeleteRule? = nil, inverse: KeyPath<Destination, Root?> & Sendable) {
        self.init(name, keyPath, .toMany(destination: Destination.self, inverse: inverse, deleteRule: deleteRule),
                  unsavedModels: { ($0 as! Root)[keyPath: keyPath] })
    }

    /// A to-many relationship whose inverse is never nil.
    ///
    /// ```swift
    /// ModelProperty("flights", \Airline.flights, deleteRule: .cascade, inverse: \Flight.airline)   // for Flight's `var airline: Airline`
    /// ```
    public init<Root: PersistentModel, Destination: PersistentModel>(_ name: String, _ keyPath: KeyPath<Root, [Destination]> & Sendable,
                                                                     deleteRule: DeleteRule? = nil, inverse: KeyPath<Destination, Root> & Sendable) {
        self.init(name, keyPath, .toMany(destination: Destination.self, inverse: inverse, deleteRule: deleteRule),
                  unsavedModels: { ($0 as! Root)[keyPath: keyPath] })
    }

    private init(_ name: String, _ keyPath: AnyKeyPath & Sendable, _ kind: Kind, key: Bool = false, unique: Bool = false, index: Bool = false,
                 default value: StoreValue? = nil, unsavedValue: @escaping @Sendable (AnyObject) -> StoreValue = { _ in .null },
                 fits: @escaping @Sendable (StoreValue) -> Bool = { _ in true },
                 unsavedModels: @escaping @Sendable (AnyObject) -> [any PersistentModel] = { _ in [] }) {
        self.name = name
        self.keyPath = keyPath
        self.kind = kind
        self.isKey = key
        self.isUnique = unique
        self.isIndexed = index
        self.defaultValue = value
        self.unsavedValue = unsavedValue
        self.fits = fits
        self.unsavedModels = unsavedModels
    }

    /// Whether it is stored in a column of its own entity (a column or a to-one).
    var hasColumn: Bool {
        if case .toMany = kind { return false }
        return true
    }
}
