import Foundation

/// An entity of the model: one SQLite table.
///
/// ```swift
/// let session = Entity(name: "Session", columns: [
///     Column(name: "id", type: .integer, isPrimaryKey: true),
///     Column(name: "user", type: .text, notNull: true),
/// ], primaryKey: ["id"])
/// ```
///
/// A value type whose contents live in one shared, immutable box: every managed object holds
/// its entity, and copying six arrays and strings per row showed in profiles.
public struct Entity: Sendable, Hashable {
    /// (`@usableFromInline` with the getters of name, table, columns and key: contexts in other
    /// modules read them per row.)
    @usableFromInline final class Storage: Sendable {
        @usableFromInline let name: String
        @usableFromInline let tableName: String
        @usableFromInline let columns: [Column]
        @usableFromInline let primaryKey: [String]
        let uniques: [[String]]
        let indexes: [[String]]
        let relationships: [Relationship]
        /// Positions of the primary-key columns among `columns`.
        @usableFromInline let primaryKeyIndexes: [Int]
        /// Column positions by name, and by lowercased name (SQLite's names are case-insensitive).
        let positions: [String: Int]
        let lowercasedPositions: [String: Int]

        init(name: String, tableName: String, columns: [Column], primaryKey: [String], uniques: [[String]], indexes: [[String]],
             relationships: [Relationship]) {
            self.name = name
            self.tableName = tableName
            self.columns = columns
            self.primaryKey = primaryKey
            self.uniques = uniques
            self.indexes = indexes
            self.relationships = relationships
            self.primaryKeyIndexes = primaryKey.compactMap { key in columns.firstIndex { $0.name == key } }
            self.positions = Dictionary(columns.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
            self.lowercasedPositions = Dictionary(columns.enumerated().map { ($1.name.lowercased(), $0) }, uniquingKeysWith: { first, _ in first })
        }

        func with(name: String? = nil, tableName: String? = nil, columns: [Column]? = nil, primaryKey: [String]? = nil,
                  uniques: [[String]]? = nil, indexes: [[String]]? = nil, relationships: [Relationship]? = nil) -> Storage {
            Storage(name: name ?? self.name, tableName: tableName ?? self.tableName, columns: columns ?? self.columns,
                    primaryKey: primaryKey ?? self.primaryKey, uniques: uniques ?? self.uniques, indexes: indexes ?? self.indexes,
                    relationships: relationships ?? self.relationships)
        }
    }

    @usableFromInline var storage: Storage

    public init(name: String, table: String? = nil, columns: [Column], primaryKey: [String],
                uniques: [[String]] = [], indexes: [[String]] = [], relationships: [Relationship] = []) {
        storage = Storage(name: name, tableName: table ?? name, columns: columns, primaryKey: primaryKey,
                          uniques: uniques, indexes: indexes, relationships: relationships)
    }

    public var name: String {
        @inlinable get { storage.name }
        set { storage = storage.with(name: newValue) }
    }

    public var tableName: String {
        @inlinable get { storage.tableName }
        set { storage = storage.with(tableName: newValue) }
    }

    public var columns: [Column] {
        @inlinable get { storage.columns }
        set { storage = storage.with(columns: newValue) }
    }

    public var primaryKey: [String] {
        @inlinable get { storage.primaryKey }
        set { storage = storage.with(primaryKey: newValue) }
    }

    package var uniques: [[String]] {
        get { storage.uniques }
        set { storage = storage.with(uniques: newValue) }
    }

    package var indexes: [[String]] {
        get { storage.indexes }
        set { storage = storage.with(indexes: newValue) }
    }

    /// Its to-one relationships (foreign-key columns); their inverses are the destinations' to-manys.
    public var relationships: [Relationship] {
        get { storage.relationships }
        set { storage = storage.with(relationships: newValue) }
    }

    /// Positions of the primary-key columns among `columns`.
    @inlinable package var primaryKeyIndexes: [Int] { storage.primaryKeyIndexes }

    /// The column with this name, compared without case as SQLite does.
    public func column(named name: String) -> Column? {
        position(ofColumn: name).map { columns[$0] }
    }

    /// The position in `columns` of the column with this name, compared without case.
    package func position(ofColumn name: String) -> Int? {
        let columns = storage.columns
        if columns.count <= 16 {
            // Comparing a few short names beats hashing one (object inserts look up every column).
            let length = name.utf8.count
            for index in columns.indices where columns[index].name.utf8.count == length && columns[index].name == name { return index }
            return storage.lowercasedPositions[name.lowercased()]
        }
        return storage.positions[name] ?? storage.lowercasedPositions[name.lowercased()]
    }

    package var columnNames: [String] { columns.map(\.name) }

    public static func == (lhs: Entity, rhs: Entity) -> Bool {
        lhs.storage === rhs.storage
            || (lhs.name == rhs.name && lhs.tableName == rhs.tableName && lhs.columns == rhs.columns
                && lhs.primaryKey == rhs.primaryKey && lhs.uniques == rhs.uniques && lhs.indexes == rhs.indexes
                && lhs.relationships == rhs.relationships)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(tableName)
        hasher.combine(columns)
    }
}

extension Entity {
    /// Every column set whose values must be unique: the primary key, `unique:` groups and
    /// columns marked `unique`.
    package var uniqueColumnSets: [[String]] {
        [primaryKey] + uniques + columns.filter(\.isUnique).map { [$0.name] }
    }

    /// True when the primary key is one integer column (SQLite's rowid, an identity column on
    /// PostgreSQL): the store assigns it to a row that leaves it out.
    package var hasRowidKey: Bool {
        primaryKey.count == 1 && column(named: primaryKey[0])?.type == .integer
    }
}
