/// A to-one relationship: a foreign-key column of its entity holding the primary key of a row
/// of `destination` (as Core Data stores a to-one, and as SQL's `REFERENCES` declares it). Its
/// `inverse`, when named, is the to-many on the destination: every row whose column holds the
/// destination row's key, computed from the column (no join table).
///
/// `deleteRule` says what a save that deletes a destination row does to the rows referencing
/// it, inside the save's transaction (SQL's `ON DELETE`; Core Data's delete rule of the inverse):
///
/// ```swift
/// let flight = Entity(name: "Flight", columns: [
///     Column(name: "id", type: .integer, isPrimaryKey: true),
///     Column(name: "airline_id", type: .integer),
/// ], primaryKey: ["id"], relationships: [
///     Relationship(name: "airline", destination: "Airline", column: "airline_id", inverse: "flights", deleteRule: .cascade),
/// ])
/// ```
public struct Relationship: Sendable, Hashable {
    /// The to-one's name (`context.relatedObject("airline", of: flight)`).
    public var name: String
    /// The entity whose primary key (one column) the column holds.
    public var destination: String
    /// The column of this entity holding the destination's key; NULL: no related row.
    public var column: String
    /// The to-many's name on the destination (`context.relatedObjects("flights", of: airline)`), if any.
    public var inverse: String?
    /// What deleting a destination row does to the rows referencing it.
    public var deleteRule: DeleteRule

    public init(name: String, destination: String, column: String, inverse: String? = nil, deleteRule: DeleteRule = .deny) {
        self.name = name
        self.destination = destination
        self.column = column
        self.inverse = inverse
        self.deleteRule = deleteRule
    }
}

/// What a save deleting a row does to the rows referencing it (SQL's `ON DELETE`):
/// `cascade` deletes them too (and what references them, by their own rules), `nullify`
/// sets their column to NULL, `deny` refuses the save (`ContextError.deleteDenied`), nothing
/// written. `deny` is the default, as SQL's `NO ACTION`.
public enum DeleteRule: String, Sendable, Hashable, CaseIterable { case cascade, nullify, deny }
