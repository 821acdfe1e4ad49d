import BatchRunStore

/// Makes a class a model: its stored properties are the columns of an entity of the same name,
/// its `@Key` property the primary key, a property of another model's type a to-one
/// relationship (a column holding that model's key) and an array of one a to-many
/// (`@Relationship(inverse:)`). The class gets `modelSchema`, `modelBacking`,
/// `init(backing:)` and `PersistentModel`. `table:` names the table (the class's name else).
///
/// ```swift
/// @Model final class Flight {
///     @Key var id: Int
///     @Unique var number: String
///     var delay: Double?
///     var seats: Int = 180
///     var airline: Airline?
///     init(id: Int, number: String, airline: Airline? = nil) { self.id = id; self.number = number; self.airline = airline }
/// }
/// let model = try Model(Airline.self, Flight.self, columnNames: .snakeCase)
/// ```
@attached(member, names: named(modelSchema), named(modelBacking), named(init(backing:)), named(clearUnsavedValues))
@attached(memberAttribute)
@attached(extension, conformances: PersistentModel)
public macro Model(table: String? = nil) = #externalMacro(module: "BatchRunMacros", type: "ModelMacro")

/// Added by `@Model` to each stored property: reads and writes go to the row once the instance
/// has one. Not written by hand.
///
/// ```swift
/// @_ModelProperty var seats: Int = 180   // as @Model marks it
/// ```
@attached(accessor, names: named(init), named(get), named(set))
@attached(peer, names: prefixed(_))
public macro _ModelProperty() = #externalMacro(module: "BatchRunMacros", type: "ModelPropertyMacro")

/// The model's primary key (one property). A nil key (`@Key var id: Int?`) on insert is
/// assigned by the store at the save and read back from the row after it.
///
/// ```swift
/// @Key var id: Int
/// ```
@attached(peer)
public macro Key() = #externalMacro(module: "BatchRunMacros", type: "ModelMarkerMacro")

/// A column whose values are unique (`UNIQUE`).
///
/// ```swift
/// @Unique var number: String
/// ```
@attached(peer)
public macro Unique() = #externalMacro(module: "BatchRunMacros", type: "ModelMarkerMacro")

/// An index on the column (a to-one relationship's column is indexed without it).
///
/// ```swift
/// @Index var departs: Date
/// ```
@attached(peer)
public macro Index() = #externalMacro(module: "BatchRunMacros", type: "ModelMarkerMacro")

/// A property that is not a column: kept in the instance only.
///
/// ```swift
/// @Transient var selected = false
/// ```
@attached(peer)
public macro Transient() = #externalMacro(module: "BatchRunMacros", type: "ModelMarkerMacro")

/// A to-many relationship, declared as SwiftData declares it: `inverse` is the to-one of the
/// other model that points here, `deleteRule` what deleting this model does to the models that
/// point at it (`.nullify` unless told: their to-one becomes nil).
///
/// ```swift
/// @Relationship(deleteRule: .cascade, inverse: \Flight.airline) var flights: [Flight]
/// ```
@attached(peer)
public macro Relationship<Destination, Inverse>(deleteRule: DeleteRule = .nullify, inverse: KeyPath<Destination, Inverse>)
    = #externalMacro(module: "BatchRunMacros", type: "ModelMarkerMacro")

/// A filter the compiler checks: the closure is Swift over the model (a misspelled property or
/// a value of the wrong type does not compile), rewritten as a `ModelFilter` rendered as SQL.
/// It takes comparisons of properties with values, `&&`, `||`, `!`, `property.like("A%")`,
/// `values.contains(property)`, and properties through a to-one (`$0.airline?.name`);
/// `$0.delay!` compares an optional property (NULL matches nothing).
///
/// ```swift
/// let late = try context.fetch(FetchDescriptor(filter: #Filter<Flight> { $0.delay! > 10 && $0.airline?.name == "UA" }))
/// ```
@freestanding(expression)
public macro Filter<Root: PersistentModel>(_ body: (Root) -> Bool) -> ModelFilter<Root>
    = #externalMacro(module: "BatchRunMacros", type: "FilterMacro")
