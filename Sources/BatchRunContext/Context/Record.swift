/// A Codable struct mapped onto an entity of the model (GRDB's records, SwiftData's `@Model`
/// without macros): each stored property is the column of the same name (or its `CodingKeys`
/// name). Inserted, fetched, updated and deleted through a context, as objects are: the same
/// change tracking, type checks, conflicts and merge policies.
///
/// Properties may be `Int`, `Int64`, `Double`, `String`, `Bool`, `Date`, `Data`, optionals of
/// them (nil is NULL), and `RawRepresentable` enums of those.
///
/// ```swift
/// struct Flight: Record {
///     static let entity = "Flight"
///     var id: Int
///     var number: String
///     var delay: Double?
/// }
/// try await context.perform { context in
///     try context.insert(Flight(id: 1, number: "BA117", delay: nil))
///     try context.save()
/// }
/// ```
public protocol Record: Codable, Sendable {
    /// The name of the entity in the store's model whose rows the record is.
    static var entity: String { get }
}
