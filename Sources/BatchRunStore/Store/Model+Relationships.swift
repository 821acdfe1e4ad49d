/// The model's relationships, looked up from either side, and checked once as a store opens.
extension Model {
    /// A to-one as declared on `source`, or seen from its destination as the inverse to-many.
    package struct Link {
        package var source: Entity
        package var relationship: Relationship
        /// The position of the foreign-key column among the source's columns.
        package var column: Int
    }

    /// True when some entity declares a relationship (saves then enforce delete rules).
    package var hasRelationships: Bool { entities.contains { !$0.relationships.isEmpty } }

    /// Every to-one whose destination is `entity`: the rows a delete of its rows reaches.
    package func links(into entity: String) -> [Link] {
        entities.flatMap { source in
            source.relationships.filter { $0.destination == entity }.compactMap { relationship in
                source.position(ofColumn: relationship.column).map { Link(source: source, relationship: relationship, column: $0) }
            }
        }
    }

    /// The to-one `name` of `entity`.
    package func toOne(_ name: String, of entity: Entity) -> Link? {
        guard let relationship = entity.relationships.first(where: { $0.name == name }),
              let column = entity.position(ofColumn: relationship.column) else { return nil }
        return Link(source: entity, relationship: relationship, column: column)
    }

    /// The to-many `name` of `entity`: the to-one whose inverse it is.
    package func toMany(_ name: String, of entity: Entity) -> Link? {
        links(into: entity.name).first { $0.relationship.inverse == name }
    }

    /// What makes the model's relationships unusable, one sentence each saying what to change.
    package var relationshipProblems: [String] {
        var problems: [String] = []
        for entity in entities {
            var names: Set<String> = []
            for relationship in entity.relationships {
                let at = "relationship \(entity.name).\(relationship.name)"
                let clashing = entity.column(named: relationship.name).map { $0.name.lowercased() != relationship.column.lowercased() } ?? false
                if !names.insert(relationship.name).inserted || clashing {
                    problems.append("\(at): the name is taken by another relationship or another column of \(entity.name); rename it")
                }
                guard let column = entity.column(named: relationship.column) else {
                    problems.append("\(at) names column \(relationship.column), which \(entity.name) lacks; add the column or name another")
                    continue
                }
                guard let destination = self[relationship.destination] else {
                    problems.append("\(at) names entity \(relationship.destination), which the model lacks")
                    continue
                }
                guard destination.primaryKey.count == 1, let key = destination.column(named: destination.primaryKey[0]) else {
                    problems.append("\(at): \(destination.name) has a primary key of \(destination.primaryKey.count) columns; "
                        + "a relationship refers to a one-column key")
                    continue
                }
                if key.type != column.type {
                    problems.append("\(at): column \(column.name) is \(column.type.rawValue) but \(destination.name).\(key.name) "
                        + "is \(key.type.rawValue); declare it \(key.type.rawValue)")
                }
                if relationship.deleteRule == .nullify && (column.notNull || entity.primaryKey.contains { $0.lowercased() == column.name.lowercased() }) {
                    let why = column.notNull ? "is not null" : "is part of the primary key"
                    problems.append("\(at) nullifies column \(column.name), which \(why); use cascade or deny\(column.notNull ? ", or drop not null" : "")")
                }
                if let inverse = relationship.inverse,
                   destination.column(named: inverse) != nil || links(into: destination.name).filter({ $0.relationship.inverse == inverse }).count > 1 {
                    problems.append("\(at): inverse \(inverse) is taken on \(destination.name) by a column or another inverse; rename it")
                }
            }
        }
        return problems
    }
}
