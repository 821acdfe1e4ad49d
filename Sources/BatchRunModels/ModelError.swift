import BatchRunStore

/// What can still go wrong with models at run time, once the compiler has checked the
/// declarations and filters: a schema whose models do not fit together, a stored value a
/// property's type cannot take, a relationship to a model whose key the store has not
/// assigned yet.
///
/// ```swift
/// do {
///     let flights = try context.fetch(FetchDescriptor<Flight>())
/// } catch let error as ModelError {
///     print(error)   // Flight.number: the row 7 holds NULL, which a non-optional String cannot take; make the property optional
/// }
/// ```
public enum ModelError: BatchRunError, Equatable {
    /// The models given to `Model(_:)` do not fit together (a relationship to a model not
    /// among them, an inverse that is not a to-one pointing back).
    case schema(String)
    /// A stored value the property's type cannot take (NULL in a non-optional, text in an `Int`).
    case storedValue(model: String, property: String, key: StoreValue, value: StoreValue)
    /// A relationship to a model whose key the store assigns at its save: save it first, or give it a key.
    case keyNotAssigned(model: String, relationship: String)
    /// The model's entity is not in the store's model (`Model(_:)` was not given its class).
    case notInModel(String)
    /// A filter or sort names a property `@Model` does not store (a computed or `@Transient` one).
    case notStored(model: String)
    /// A model inserted into (or fetched from) another context than the one it is used with.
    case otherContext(String)

    package var code: String {
        switch self {
        case .schema: "model.schema"
        case .storedValue: "model.stored-value"
        case .keyNotAssigned: "model.key-not-assigned"
        case .notInModel: "model.not-in-model"
        case .notStored: "model.not-stored"
        case .otherContext: "model.other-context"
        }
    }

    package var message: String { description }

    /// What went wrong, and what to do about it, in one sentence.
    public var description: String {
        switch self {
        case .schema(let problem):
            return "the models do not fit together: \(problem)"
        case .storedValue(let model, let property, let key, let value):
            return "\(model).\(property): the row \(key) holds \(value == .null ? "NULL" : "\(value)"), which the property's type cannot take; "
                + (value == .null ? "make the property optional" : "change the property's type or the stored values")
        case .keyNotAssigned(let model, let relationship):
            return "\(relationship) points at a \(model) whose key the store assigns at its save: save the \(model) first, or give it a key"
        case .notInModel(let name):
            return "the store's model has no entity \(name): give \(name).self to Model(_:) when opening the store"
        case .notStored(let model):
            return "a filter or sort of \(model) names a property @Model does not store (computed or @Transient)"
        case .otherContext(let model):
            return "this \(model) belongs to another context: a model stays in the context it was inserted into or fetched from (pass its key to another)"
        }
    }
}
