import BatchRunStore

/// A typed condition on a model's rows, rendered as SQL with parameters at the fetch; `#Filter`
/// writes it from a Swift closure the compiler checks. Its parts name properties by key path,
/// so a misspelled property or a value of the wrong type does not compile.
///
/// ```swift
/// let filter = #Filter<Flight> { $0.delay! > 10 && $0.airline?.name == "UA" }
/// // the same, by hand:
/// let same = ModelFilter<Flight>.and(.compare(\.delay, .greater, 10), .through(\.airline, .compare(\.name, .equal, "UA")))
/// ```
public struct ModelFilter<Root: PersistentModel>: Sendable {
    /// The SQL of the condition for the store's model, its values added to the parameters.
    let render: @Sendable (Model, inout [String: StoreValue]) throws -> String

    init(_ render: @escaping @Sendable (Model, inout [String: StoreValue]) throws -> String) {
        self.render = render
    }

    /// Both conditions.
    ///
    /// ```swift
    /// let lateAndFull = ModelFilter<Flight>.and(.compare(\.delay, .greater, 10), .compare(\.seats, .greaterOrEqual, 180))
    /// ```
    public static func and(_ lhs: ModelFilter, _ rhs: ModelFilter) -> ModelFilter {
        ModelFilter { model, params in "(\(try lhs.render(model, &params)) AND \(try rhs.render(model, &params)))" }
    }

    /// Either condition.
    ///
    /// ```swift
    /// let unknownOrBritish = ModelFilter<Flight>.or(.compare(\.delay, .equal, nil), .like(\.number, "BA%"))
    /// ```
    public static func or(_ lhs: ModelFilter, _ rhs: ModelFilter) -> ModelFilter {
        ModelFilter { model, params in "(\(try lhs.render(model, &params)) OR \(try rhs.render(model, &params)))" }
    }

    /// Not the condition (SQL's `NOT`: a row where it is NULL matches neither).
    ///
    /// ```swift
    /// let notLate = ModelFilter<Flight>.not(.compare(\.delay, .greater, 10))
    /// ```
    public static func not(_ filter: ModelFilter) -> ModelFilter {
        ModelFilter { model, params in "(NOT \(try filter.render(model, &params)))" }
    }

    /// A property compared with a value.
    ///
    /// ```swift
    /// let full = ModelFilter<Flight>.compare(\.seats, .greaterOrEqual, 180)
    /// ```
    public static func compare<Value: ColumnValue>(_ keyPath: KeyPath<Root, Value> & Sendable, _ comparison: ModelComparison, _ value: Value) -> ModelFilter {
        let stored = value.storeValue
        return ModelFilter { model, params in
            let column = try column(keyPath, in: model)
            if stored == .null, comparison == .equal || comparison == .notEqual {
                return "\(column) IS \(comparison == .equal ? "" : "NOT ")NULL"
            }
            return twoValued(column, comparison, parameter(stored, &params), acceptsNull: Value.acceptsNull)
        }
    }

    /// A to-one relationship compared with a model (`equal`, `notEqual`; nil is `IS NULL`).
    ///
    /// ```swift
    /// let united = ModelFilter<Flight>.compare(\.airline, .equal, airline)   // an Airline with its key
    /// ```
    public static func compare<Destination: PersistentModel>(_ keyPath: KeyPath<Root, Destination?> & Sendable, _ comparison: ModelComparison,
                                                             _ value: Destination?) -> ModelFilter {
        let key = value?.modelBacking.object?.objectID?.singleKey ?? .null
        let unsaved = value != nil && key == .null
        return ModelFilter { model, params in
            let column = try column(keyPath, in: model)
            if unsaved { throw ModelError.keyNotAssigned(model: "\(Destination.self)", relationship: "a filter of \(Root.self)") }
            if key == .null { return "\(column) IS \(comparison == .equal ? "" : "NOT ")NULL" }
            return twoValued(column, comparison, parameter(key, &params), acceptsNull: true)
        }
    }

    /// A property that is not nil (`IS NOT NULL`; always true of one that cannot be nil).
    ///
    /// ```swift
    /// let crewed = ModelFilter<Flight>.through(\.captain, .notNil(\.name))   // #Filter<Flight> { $0.captain?.name != nil }
    /// ```
    public static func notNil<Value>(_ keyPath: KeyPath<Root, Value> & Sendable) -> ModelFilter {
        ModelFilter { model, params in "\(try column(keyPath, in: model)) IS NOT NULL" }
    }

    /// A text property matched with a SQL `LIKE` pattern (`%` any text, `_` one character), as
    /// the store's database matches it (SQLite ignores the case of ASCII letters, PostgreSQL does not).
    ///
    /// ```swift
    /// let british = ModelFilter<Flight>.like(\.number, "BA%")
    /// ```
    public static func like<Value: ColumnValue>(_ keyPath: KeyPath<Root, Value> & Sendable, _ pattern: String) -> ModelFilter {
        ModelFilter { model, params in
            let column = try column(keyPath, in: model)
            let like = "\(column) LIKE \(parameter(.text(pattern), &params))"
            return Value.acceptsNull ? "(\(column) IS NOT NULL AND \(like))" : like
        }
    }

    /// A property whose value is one of `values` (`IN`); none given matches no row.
    ///
    /// ```swift
    /// let small = ModelFilter<Flight>.isIn(\.seats, [120, 150])
    /// ```
    public static func isIn<Value: ColumnValue, Values: Sequence & Sendable>(_ keyPath: KeyPath<Root, Value> & Sendable, _ values: Values) -> ModelFilter
    where Values.Element == Value {
        isIn(keyPath, values.map(\.storeValue), acceptsNull: Value.acceptsNull)
    }

    /// An optional property whose value is one of `values` (`IN`); NULL is never among them.
    ///
    /// ```swift
    /// let some = ModelFilter<Flight>.isIn(\.delay, [5.0, 10.0])
    /// ```
    public static func isIn<Value: ColumnValue, Values: Sequence & Sendable>(_ keyPath: KeyPath<Root, Value?> & Sendable, _ values: Values) -> ModelFilter
    where Values.Element == Value {
        isIn(keyPath, values.map(\.storeValue), acceptsNull: true)
    }

    /// `IN` the stored values; on a column that may hold NULL, false (not NULL) for a NULL.
    private static func isIn(_ keyPath: AnyKeyPath & Sendable, _ stored: [StoreValue], acceptsNull: Bool) -> ModelFilter {
        ModelFilter { model, params in
            let column = try column(keyPath, in: model)
            guard !stored.isEmpty else { return "0 = 1" }
            let isIn = "\(column) IN (\(stored.map { parameter($0, &params) }.joined(separator: ", ")))"
            return acceptsNull ? "(\(column) IS NOT NULL AND \(isIn))" : isIn
        }
    }

    /// A condition on the model a to-one relationship points at (`$0.airline?.name == "UA"`).
    ///
    /// ```swift
    /// let ua = ModelFilter<Flight>.through(\.airline, .compare(\.name, .equal, "UA"))
    /// ```
    public static func through<Destination: PersistentModel>(_ keyPath: KeyPath<Root, Destination?> & Sendable, _ filter: ModelFilter<Destination>) -> ModelFilter {
        ModelFilter { model, params in try through(keyPath, filter, model, &params) }
    }

    /// A condition on the model a to-one relationship that is never nil points at.
    ///
    /// ```swift
    /// let ua = ModelFilter<Flight>.through(\.airline, .compare(\.name, .equal, "UA"))   // for `var airline: Airline`
    /// ```
    public static func through<Destination: PersistentModel>(_ keyPath: KeyPath<Root, Destination> & Sendable, _ filter: ModelFilter<Destination>) -> ModelFilter {
        ModelFilter { model, params in try through(keyPath, filter, model, &params) }
    }

    private static func through<Destination: PersistentModel>(_ keyPath: AnyKeyPath, _ filter: ModelFilter<Destination>, _ model: Model,
                                                              _ params: inout [String: StoreValue]) throws -> String {
        let column = try column(keyPath, in: model)
        let name = Destination.modelSchema.entityName
        guard let destination = model[name] else { throw ModelError.notInModel(name) }
        // `IS NOT NULL` first: a row pointing nowhere is false, not NULL, so `.not` takes it in.
        return "(\(column) IS NOT NULL AND \(column) IN (SELECT \(SQL.quote(destination.primaryKey[0])) FROM \(SQL.quote(destination.tableName)) WHERE \(try filter.render(model, &params))))"
    }

    /// A comparison that is true or false, never NULL, so that `.not` of it is what Swift's `!`
    /// is: on a column that may hold NULL, NULL is equal to no value and unequal to every one.
    private static func twoValued(_ column: String, _ comparison: ModelComparison, _ parameter: String, acceptsNull: Bool) -> String {
        guard acceptsNull else { return "\(column) \(comparison.rawValue) \(parameter)" }
        if comparison == .notEqual { return "(\(column) IS NULL OR \(column) <> \(parameter))" }
        return "(\(column) IS NOT NULL AND \(column) \(comparison.rawValue) \(parameter))"
    }

    /// The quoted column of a property of `Root`.
    static func column(_ keyPath: AnyKeyPath, in model: Model) throws -> String {
        let schema = Root.modelSchema
        guard let entity = model[schema.entityName] else { throw ModelError.notInModel(schema.entityName) }
        guard let property = schema.property(for: keyPath), let index = schema.columnIndex(of: property.name) else {
            throw ModelError.notStored(model: schema.entityName)
        }
        return SQL.quote(entity.columns[index].name)
    }

    private static func parameter(_ value: StoreValue, _ params: inout [String: StoreValue]) -> String {
        let name = "_batchrun_m\(params.count)"
        params[name] = value
        return ":" + name
    }
}
