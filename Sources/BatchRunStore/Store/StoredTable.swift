/// A table as the database keeps it: its columns with their stored types, its primary key and
/// its indexes (unique or not, made by `CREATE INDEX` or by a constraint). What a schema
/// change is computed against; each backend reads it from its own catalog.
package struct StoredTable: Sendable {
    package struct StoredColumn: Sendable {
        package let name: String
        /// The type as the database names it (`INTEGER`, `varchar(20)`, `double precision`).
        package let type: String

        package init(name: String, type: String) {
            self.name = name
            self.type = type
        }
    }

    package struct StoredIndex: Sendable {
        package let columns: [String]
        package let isUnique: Bool

        package init(columns: [String], isUnique: Bool) {
            self.columns = columns
            self.isUnique = isUnique
        }
    }

    package let name: String
    package var columns: [StoredColumn] = []
    /// The primary key's columns (SQLite keeps a rowid key without an index).
    package var primaryKey: [String] = []
    package var indexes: [StoredIndex] = []

    /// The column named `name`, compared as the databases compare names (case-insensitively).
    package func column(_ name: String) -> StoredColumn? {
        let wanted = name.lowercased()
        return columns.first { $0.name.lowercased() == wanted }
    }

    package init(name: String, columns: [StoredColumn] = [], primaryKey: [String] = [], indexes: [StoredIndex] = []) {
        self.name = name
        self.columns = columns
        self.primaryKey = primaryKey
        self.indexes = indexes
    }
}
