/// A table as the database keeps it: its columns with their stored types, its primary key and
/// its indexes (unique or not, made by `CREATE INDEX` or by a constraint). What a schema
/// change is computed against; each backend reads it from its own catalog.
struct StoredTable: Sendable {
    struct StoredColumn: Sendable {
        let name: String
        /// The type as the database names it (`INTEGER`, `varchar(20)`, `double precision`).
        let type: String
    }

    struct StoredIndex: Sendable {
        let columns: [String]
        let isUnique: Bool
    }

    let name: String
    var columns: [StoredColumn] = []
    /// The primary key's columns (SQLite keeps a rowid key without an index).
    var primaryKey: [String] = []
    var indexes: [StoredIndex] = []

    /// The column named `name`, compared as the databases compare names (case-insensitively).
    func column(_ name: String) -> StoredColumn? {
        let wanted = name.lowercased()
        return columns.first { $0.name.lowercased() == wanted }
    }
}
