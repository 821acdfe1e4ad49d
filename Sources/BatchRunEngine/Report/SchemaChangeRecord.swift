import BatchRunStore

/// A schema change a run made before its jobs started, as the JSON report lists it
/// (`"schema_changes"`): `{ "entity": "Person", "change": "added column score real default 1.5",
/// "statement": "ALTER TABLE ..." }`.
package struct SchemaChangeRecord: Sendable, Hashable, Codable {
    package var entity: String
    package var change: String
    package var statement: String

    package init(_ change: SchemaChange) {
        entity = change.entity
        self.change = change.summary(made: true)
        statement = change.statement
    }
}
