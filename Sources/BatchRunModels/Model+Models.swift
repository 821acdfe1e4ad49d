import BatchRunStore

extension Model {
    /// The entities of `@Model` classes, each with its columns, key, uniques, indexes and
    /// relationships; a to-one's delete rule is the one its inverse to-many declares
    /// (`.nullify` unless told; `.deny` for a to-one that is never nil). Every class a
    /// relationship names must be among them.
    ///
    /// ```swift
    /// let store = try Store(path: "var/air.sqlite", model: try Model(Airline.self, Flight.self, columnNames: .snakeCase))
    /// ```
    public init(_ types: any PersistentModel.Type..., columnNames naming: ColumnNaming = .asWritten) throws {
        let schemas = types.map { $0.modelSchema }
        func destinationSchema(of type: any PersistentModel.Type, for property: String, in owner: ModelSchema) throws -> ModelSchema {
            guard let found = schemas.first(where: { ObjectIdentifier($0.type) == ObjectIdentifier(type) }) else {
                throw ModelError.schema("\(owner.entityName).\(property) relates to \(type), which is not among the models given")
            }
            return found
        }
        var entities: [Entity] = []
        for schema in schemas {
            var columns: [Column] = []
            var indexes: [[String]] = []
            var relationships: [Relationship] = []
            var key: String?
            for property in schema.properties {
                switch property.kind {
                case .column(let type, let acceptsNull):
                    let name = naming.column(for: property.name)
                    if property.isKey { key = name }
                    columns.append(Column(name: name, type: type, isPrimaryKey: property.isKey, notNull: !acceptsNull && !property.isKey,
                                          isUnique: property.isUnique, defaultLiteral: property.defaultValue.map { Self.literal($0, type) }))
                    if property.isIndexed { indexes.append([name]) }
                case .toOne(let destinationType, let acceptsNull):
                    let destination = try destinationSchema(of: destinationType, for: property.name, in: schema)
                    guard let destinationKey = destination.key, case .column(let keyType, _) = destinationKey.kind else {
                        throw ModelError.schema("\(destination.entityName) has no @Key column")
                    }
                    let name = naming.foreignKey(for: property.name)
                    columns.append(Column(name: name, type: keyType, notNull: !acceptsNull, isUnique: property.isUnique))
                    indexes.append([name])
                    var inverse: String?
                    var rule: DeleteRule = acceptsNull ? .nullify : .deny
                    for other in destination.properties {
                        if case .toMany(let back, let inversePath, let deleteRule) = other.kind,
                           ObjectIdentifier(back) == ObjectIdentifier(schema.type), (inversePath as AnyKeyPath) == (property.keyPath as AnyKeyPath) {
                            inverse = other.name
                            rule = deleteRule ?? rule
                        }
                    }
                    relationships.append(Relationship(name: property.name, destination: destination.entityName, column: name,
                                                      inverse: inverse, deleteRule: rule))
                case .toMany(let destinationType, let inversePath, _):
                    let destination = try destinationSchema(of: destinationType, for: property.name, in: schema)
                    guard let inverse = destination.property(for: inversePath), case .toOne(let back, _) = inverse.kind,
                          ObjectIdentifier(back) == ObjectIdentifier(schema.type) else {
                        throw ModelError.schema("\(schema.entityName).\(property.name)'s inverse is not a stored to-one of \(destination.entityName) pointing at \(schema.entityName)")
                    }
                }
            }
            guard let key else { throw ModelError.schema("\(schema.entityName) has no @Key column") }
            entities.append(Entity(name: schema.entityName, table: schema.table, columns: columns, primaryKey: [key],
                                   indexes: indexes, relationships: relationships))
        }
        self.init(entities: entities)
    }

    /// A column default's SQL text.
    private static func literal(_ value: StoreValue, _ type: ColumnType) -> String {
        if type == .boolean, let flag = value.bool { return flag ? "true" : "false" }
        switch value {
        case .null: return "NULL"
        case .integer(let number): return String(number)
        case .real(let number): return "\(number)"
        case .text(let text): return SQL.literal(text)
        case .blob(let bytes): return "X'" + bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined() + "'"
        }
    }
}
