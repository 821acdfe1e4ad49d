/// The schema a job file declares: its entities, in the order they were written.
public struct Model: Sendable, Hashable {
    public var entities: [Entity]

    public init(entities: [Entity]) {
        self.entities = entities
    }

    public subscript(entityName: String) -> Entity? {
        entities.first { $0.name == entityName }
    }

    /// Table names that expressions may read (lowercased, as SQLite compares them).
    package var readableTables: Set<String> {
        Set(entities.map { $0.tableName.lowercased() })
    }
}
