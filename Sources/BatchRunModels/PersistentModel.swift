/// A class `@Model` made a model: its schema, and the backing that ties an instance to its row.
/// `@Model` writes the conformance; nothing here is written by hand. The instances are not
/// Sendable (they live in their context, as its objects do); the type itself is
/// (`SendableMetatype`): schemas and filters name it from any thread.
///
/// ```swift
/// let schema = Flight.modelSchema          // the columns and relationships @Model read
/// try context.insert(Flight(number: "BA117", departs: Date()))
/// ```
public protocol PersistentModel: AnyObject, SendableMetatype {
    /// The entity's columns and relationships, read from the declaration.
    static var modelSchema: ModelSchema { get }
    /// The row of the instance once inserted or fetched (nothing before).
    var modelBacking: ModelBacking { get }
    /// An instance over a row its context holds.
    ///
    /// ```swift
    /// let flight = Flight(backing: backing)   // made by a fetch or a walk, not by hand
    /// ```
    init(backing: ModelBacking)
    /// Drops the values the instance held before it had a row (the row holds them now, and
    /// the models they named are not kept alive by it).
    ///
    /// ```swift
    /// flight.clearUnsavedValues()   // called by the insert, once the row holds the values
    /// ```
    func clearUnsavedValues()
}
