import BatchRunStore

/// A column's `references ENTITY [on delete cascade|set null|restrict|no action]`, as written,
/// resolved into a `Relationship` once every entity is read (an entity may be referenced
/// before it is declared). The relationship is named after its column.
struct ColumnReference {
    package var entity: String
    package var column: String
    package var destination: String
    package var rule: DeleteRule
    /// Where the destination's name is written.
    package var at: SourceLocation

    /// Words after `on delete`, and the rule each one means (SQL's; `no action`, SQL's
    /// default, and `restrict` both refuse the delete).
    package static let actions: [(words: [String], rule: DeleteRule)] = [
        (["cascade"], .cascade), (["set", "null"], .nullify), (["restrict"], .deny), (["no", "action"], .deny),
    ]

    /// The relationship this reference declares on `entity`, or the problem with it.
    func relationship(in model: Model) -> Result<Relationship, ReferenceProblem> {
        guard let target = model[destination] else {
            return .failure(ReferenceProblem("column \(entity).\(column) references unknown entity \(destination)"
                + Suggestion.hint(for: destination, in: model.entities.map(\.name))))
        }
        guard target.primaryKey.count == 1, let key = target.column(named: target.primaryKey[0]) else {
            return .failure(ReferenceProblem("column \(entity).\(column) references \(destination), whose primary key has "
                + "\(target.primaryKey.count) columns; a reference needs a one-column primary key"))
        }
        guard let source = model[entity], let own = source.column(named: column) else {
            return .failure(ReferenceProblem("column \(entity).\(column) is not declared"))
        }
        if own.type != key.type {
            return .failure(ReferenceProblem("column \(entity).\(column) is \(own.type.rawValue) but \(destination).\(key.name), "
                + "which it references, is \(key.type.rawValue); declare it \(key.type.rawValue)"))
        }
        if rule == .nullify && (own.notNull || source.primaryKey.contains { $0.lowercased() == own.name.lowercased() }) {
            let why = own.notNull ? "is not null" : "is part of the primary key"
            return .failure(ReferenceProblem("column \(entity).\(column) \(why), so 'on delete set null' cannot empty it; "
                + "use on delete cascade or restrict\(own.notNull ? ", or drop not null" : "")"))
        }
        return .success(Relationship(name: column, destination: destination, column: column, deleteRule: rule))
    }
}

/// Why a `references` cannot be used, as a job-file error says it.
struct ReferenceProblem: Error {
    package var message: String
    package init(_ message: String) { self.message = message }
}
