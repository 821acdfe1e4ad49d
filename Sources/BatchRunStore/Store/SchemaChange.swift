/// One additive change a store's tables need to hold a model (JOBFILE.md section 13): a
/// declared column added, a column renamed (`full_name: text was name`), an index or a unique
/// created. Nothing is ever dropped or retyped.
///
/// ```swift
/// for change in try store.schemaChanges(for: newModel) { print(change) }   // Person: added column score real default 1.5
/// ```
public struct SchemaChange: Sendable, Hashable, CustomStringConvertible {
    /// What changes.
    package enum Kind: Sendable, Hashable {
        case addColumn(Column)
        case renameColumn(from: String, to: String)
        case createIndex([String])
        case createUnique([String])
    }

    /// The entity whose table changes.
    package let entity: String
    package let table: String
    package let kind: Kind
    /// The statement that makes the change, as the store's database reads it.
    package let statement: String

    /// The change as made: `Person: added column score real default 1.5`.
    public var description: String { "\(entity): \(summary(made: true))" }

    /// The change as made (`added column ...`) or to make (`add column ...`).
    package func summary(made: Bool) -> String {
        switch kind {
        case .addColumn(let column):
            return (made ? "added" : "add") + " column \(column.name) \(column.type.rawValue)"
                + (column.notNull ? " not null" : "") + (column.defaultLiteral.map { " default \($0)" } ?? "")
        case .renameColumn(let from, let to):
            return (made ? "renamed" : "rename") + " column \(from) to \(to)"
        case .createIndex(let columns):
            return (made ? "created" : "create") + " index on (\(columns.joined(separator: ", ")))"
        case .createUnique(let columns):
            return (made ? "created" : "create") + " unique (\(columns.joined(separator: ", ")))"
        }
    }
}
