import Foundation

/// Makes a store's tables hold a model (JOBFILE.md section 13), as Core Data's lightweight
/// migration and dbt's `append_new_columns` do: missing tables are created, and a declared
/// column the table lacks is added, a column declared `NEW: TYPE was OLD` renamed with its
/// data, a declared index or unique created, all in one write transaction. Nothing is dropped
/// or retyped: what cannot be done that way (a `not null` column without a default on a table
/// with rows, a unique that rows break, a declared type the stored column does not hold) is
/// refused, every refusal at once, and nothing is changed.
///
/// Comparing is a read: a store that needs nothing opens without its write lock. The changes
/// are computed again inside the write transaction, under a lock that makes concurrent
/// processes' changes one at a time, so the second process to start finds them made. Each
/// change made is recorded in `_batchrun_schema`.
///
/// ```swift
/// let made = try SchemaMigration(model: model, backend: backend).migrate(SchemaChangeOptions(file: "jobs/nightly.yaml"))
/// ```
package struct SchemaMigration {
    package let model: Model
    package let backend: any StoreBackend

    /// What the store lacks: tables to create (not counted as changes: a new store has none),
    /// and changes to existing tables.
    package struct Plan {
        var newTables: [Entity] = []
        package var changes: [SchemaChange] = []

        package var isEmpty: Bool { newTables.isEmpty && changes.isEmpty }
    }

    /// The environment variable of a test hook: set to a path, the schema transaction creates
    /// that file once its changes are made (before it commits), then waits a minute (or
    /// `BATCHRUN_TEST_SCHEMA_PAUSE_SECONDS`), so a test can kill the process inside the
    /// transaction or start a second one beside it.
    static let testPauseVariable = "BATCHRUN_TEST_SCHEMA_PAUSE"

    /// Makes the changes `options` allows (none: it throws `StoreError.schemaChangesRefused`
    /// when a change is needed) and returns them, each recorded in `_batchrun_schema`.
    package func migrate(_ options: SchemaChangeOptions) throws -> [AppliedSchemaChange] {
        let first = try backend.read(interruptedBy: nil) { connection in try plan(in: connection) }
        if first.isEmpty { return [] }
        if !options.allowed && !first.changes.isEmpty { throw StoreError.schemaChangesRefused(first.changes) }
        return try backend.write(interruptedBy: nil) { connection in
            try backend.lockSchema(in: connection)
            let plan = try plan(in: connection)
            if !options.allowed && !plan.changes.isEmpty { throw StoreError.schemaChangesRefused(plan.changes) }
            for entity in plan.newTables { try connection.createTable(entity) }
            var refusals: [SchemaRefusal] = []
            for change in plan.changes {
                // A unique over a column added just now is checked once the column is there.
                if case .createUnique(let columns) = change.kind, let entity = model[change.entity],
                   let refusal = try duplicate(columns, in: entity, on: connection) {
                    refusals.append(SchemaRefusal(message: refusal, entity: change.entity, column: columns.count == 1 ? columns[0] : nil))
                    continue
                }
                try connection.execute(change.statement)
            }
            if !refusals.isEmpty { throw SchemaRefusals(refusals) }
            let applied = try record(plan.changes, file: options.file, in: connection)
            Self.pauseForTests()
            return applied
        }
    }

    /// The changes a store needs, made by nothing (a preview); throws the refusals.
    package func preview(in connection: any StoreConnection) throws -> [SchemaChange] {
        try plan(in: connection).changes
    }

    // MARK: Comparing

    /// What `model` needs of the tables `connection` sees. Throws `SchemaRefusals` with every
    /// refusal found.
    package func plan(in connection: any StoreConnection) throws -> Plan {
        let stored = try backend.storedTables(named: model.entities.map(\.tableName), in: connection)
        // Read only when a declared column is missing: a role that may use the tables but not read
        // `_batchrun_schema` (a queue's submit role, after an item changed a schema) opens them.
        var renames: [String: [String: String]]?
        func renamesOf(_ entity: String) throws -> [String: String] {
            if renames == nil { renames = try recordedRenames(in: connection) }
            return renames?[entity] ?? [:]
        }
        var plan = Plan()
        var refusals: [SchemaRefusal] = []
        for entity in model.entities {
            guard let table = stored[entity.tableName] else {
                plan.newTables.append(entity)
                continue
            }
            plan.changes += try changes(of: entity, table: table, renames: { try renamesOf(entity.name) }, in: connection, refusals: &refusals)
        }
        if !refusals.isEmpty { throw SchemaRefusals(refusals) }
        return plan
    }

    private func changes(of entity: Entity, table: StoredTable, renames: () throws -> [String: String], in connection: any StoreConnection,
                         refusals: inout [SchemaRefusal]) throws -> [SchemaChange] {
        let ddl = backend.tableDefinition
        var changes: [SchemaChange] = []
        var hasRowsMemo: Bool?
        func hasRows() throws -> Bool {
            if let hasRowsMemo { return hasRowsMemo }
            let found = try connection.value("SELECT 1 FROM \(SQL.quote(table.name)) LIMIT 1") != nil
            hasRowsMemo = found
            return found
        }
        /// Declared column (lowercased) to its stored name now, for columns that exist now.
        var storedNames: [String: String] = [:]
        /// Stored name (lowercased) to declared name (lowercased), for renames.
        var renamed: [String: String] = [:]
        func change(_ kind: SchemaChange.Kind, _ statement: String) {
            changes.append(SchemaChange(entity: entity.name, table: table.name, kind: kind, statement: statement))
        }
        for column in entity.columns {
            if let stored = table.column(column.name) {
                checkType(of: stored, declared: column, entity: entity, refusals: &refusals)
                storedNames[column.name.lowercased()] = stored.name
                continue
            }
            if let earlier = column.renamedFrom, let stored = table.column(earlier) {
                checkType(of: stored, declared: column, entity: entity, refusals: &refusals)
                storedNames[column.name.lowercased()] = stored.name
                renamed[stored.name.lowercased()] = column.name.lowercased()
                change(.renameColumn(from: stored.name, to: column.name), ddl.renameColumn(stored.name, to: column.name, of: entity))
                continue
            }
            // An older file, after a newer one renamed its column: adding it again would split the data.
            if let renamedTo = try renames()[column.name.lowercased()], let stored = table.column(renamedTo) {
                refusals.append(SchemaRefusal(message: "\(entity.name): column \(column.name) was renamed to \(stored.name) by an earlier run of a newer job file "
                    + "(see _batchrun_schema); declare \(stored.name) (\(stored.name): \(column.type.rawValue) was \(column.name)) instead of \(column.name)", entity: entity.name, column: column.name))
                continue
            }
            if entity.primaryKey.contains(column.name) {
                refusals.append(SchemaRefusal(message: "\(entity.name): the table \(table.name) has no column \(column.name), which the job file declares part of the "
                    + "primary key; a key column cannot be added to an existing table: declare the table's own key, or make a new table (table: NAME)", entity: entity.name, column: column.name))
                continue
            }
            let noDefault = column.defaultLiteral == nil || column.defaultLiteral?.uppercased() == "NULL"
            if try column.notNull && noDefault && hasRows() {
                refusals.append(SchemaRefusal(message: "\(entity.name): cannot add column \(column.name) \(column.type.rawValue) not null: the table \(table.name) has rows, "
                    + "and they would have no value; give it a default (\(column.name): \(column.type.rawValue) not null default \(Self.exampleDefault(column.type))) "
                    + "or leave out not null", entity: entity.name, column: column.name))
                continue
            }
            switch backend.addColumnStatement(column, to: entity, hasRows: try hasRows()) {
            case .success(let statement): change(.addColumn(column), statement)
            case .failure(let refusal): refusals.append(SchemaRefusal(message: "\(entity.name): cannot add column \(column.name): \(refusal.message)", entity: entity.name, column: column.name))
            }
        }
        // Index and unique columns as they will be named, whatever they are stored as now.
        func declaredName(_ stored: String) -> String { renamed[stored.lowercased()] ?? stored.lowercased() }
        let storedKey = table.primaryKey.map(declaredName)
        let storedIndexes = table.indexes.map { (columns: $0.columns.map(declaredName), isUnique: $0.isUnique) }
        let uniques = entity.uniques + entity.columns.filter { $0.isUnique && !entity.primaryKey.contains($0.name) }.map { [$0.name] }
        for unique in uniques {
            let wanted = Set(unique.map { $0.lowercased() })
            if Set(storedKey) == wanted || storedIndexes.contains(where: { $0.isUnique && Set($0.columns) == wanted }) { continue }
            // Over columns there now, duplicates are found before anything changes; over a
            // column to be added, inside the transaction once it is there.
            let existing = unique.compactMap { storedNames[$0.lowercased()] }
            if existing.count == unique.count, let refusal = try duplicate(existing, named: unique, in: entity, table: table.name, on: connection) {
                refusals.append(SchemaRefusal(message: refusal, entity: entity.name, column: unique.count == 1 ? unique[0] : nil))
                continue
            }
            change(.createUnique(unique), ddl.createIndex(unique, of: entity, unique: true))
        }
        for index in entity.indexes {
            let wanted = index.map { $0.lowercased() }
            if storedKey.starts(with: wanted) || storedIndexes.contains(where: { $0.columns.starts(with: wanted) }) { continue }
            change(.createIndex(index), ddl.createIndex(index, of: entity, unique: false))
        }
        return changes
    }

    private func checkType(of stored: StoredTable.StoredColumn, declared column: Column, entity: Entity, refusals: inout [SchemaRefusal]) {
        guard !backend.storedType(stored.type, holds: column.type) else { return }
        refusals.append(SchemaRefusal(message: "\(entity.name): column \(column.name) is declared \(column.type.rawValue), but the table \(entity.tableName) stores "
            + "\(stored.name) as \(stored.type); batchrun never changes a column's type: declare the type the column has, "
            + "or convert the column yourself", entity: entity.name, column: column.name))
    }

    /// A refusal naming one key that rows of `entity`'s table share, if any do.
    private func duplicate(_ columns: [String], in entity: Entity, on connection: any StoreConnection) throws -> String? {
        try duplicate(columns, named: columns, in: entity, table: entity.tableName, on: connection)
    }

    private func duplicate(_ stored: [String], named declared: [String], in entity: Entity, table: String,
                           on connection: any StoreConnection) throws -> String? {
        let list = SQL.quoteList(stored)
        // NULLs never collide under a unique (SQLite and PostgreSQL alike).
        let notNull = stored.map { "\(SQL.quote($0)) IS NOT NULL" }.joined(separator: " AND ")
        guard let row = try connection.rows("""
            SELECT \(list), count(*) FROM \(SQL.quote(table)) WHERE \(notNull) GROUP BY \(list) HAVING count(*) > 1 LIMIT 1
            """).first else { return nil }
        let key = zip(declared, row).map { "\($0) = \(Self.literal($1))" }.joined(separator: ", ")
        return "\(entity.name): cannot create unique (\(declared.joined(separator: ", "))): \(row.last.map { "\($0)" } ?? "several") rows "
            + "share \(key); remove or merge the duplicate rows, or drop the unique from the job file"
    }

    /// The renames recorded in `_batchrun_schema`: entity to earlier column name (lowercased) to its later name.
    private func recordedRenames(in connection: any StoreConnection) throws -> [String: [String: String]] {
        guard try connection.tableExists(SchemaHistory.table.tableName) else { return [:] }
        var renames: [String: [String: String]] = [:]
        for row in try connection.rows("SELECT entity, change FROM \(SchemaHistory.table.tableName) WHERE change LIKE 'renamed column % to %' ORDER BY id") {
            guard let entity = row[0].string, let change = row[1].string else { continue }
            let words = change.split(separator: " ")
            guard words.count == 5 else { continue }
            renames[entity, default: [:]][words[2].lowercased()] = String(words[4])
        }
        return renames
    }

    // MARK: Recording

    /// Records each change in `_batchrun_schema` (created when missing).
    private func record(_ changes: [SchemaChange], file: String?, in connection: any StoreConnection) throws -> [AppliedSchemaChange] {
        guard !changes.isEmpty else { return [] }
        if !(try connection.tableExists(SchemaHistory.table.tableName)) { try connection.createTable(SchemaHistory.table) }
        let now = DateText.text(Date())
        return try changes.map { change in
            let id = try connection.value("""
                INSERT INTO \(SchemaHistory.table.tableName) (applied_at, file, entity, change, statement) VALUES (?, ?, ?, ?, ?) RETURNING id
                """, [.text(now), file.map { .text($0) } ?? .null, .text(change.entity), .text(change.summary(made: true)), .text(change.statement)])
            return AppliedSchemaChange(change: change, recordID: Int64(id?.int ?? 0))
        }
    }

    private static func pauseForTests() {
        guard let path = ProcessInfo.processInfo.environment[testPauseVariable], !path.isEmpty else { return }
        _ = FileManager.default.createFile(atPath: path, contents: Data())
        Backoff.wait(ProcessInfo.processInfo.environment[testPauseVariable + "_SECONDS"].flatMap(Double.init) ?? 60)
    }

    private static func literal(_ value: StoreValue) -> String {
        switch value {
        case .text(let text): "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
        default: "\(value)"
        }
    }

    private static func exampleDefault(_ type: ColumnType) -> String {
        switch type {
        case .integer, .real: "0"
        case .text: "''"
        case .blob: "x''"
        case .boolean: "false"
        case .datetime: "'1970-01-01T00:00:00Z'"
        }
    }

    package init(model: Model, backend: any StoreBackend) {
        self.model = model
        self.backend = backend
    }
}

/// What a store may do about its schema as it opens (JOBFILE.md section 13).
package struct SchemaChangeOptions: Sendable {
    /// False: a needed change is `StoreError.schemaChangesRefused` (`--no-schema-changes`).
    package var allowed = true
    /// The job file the changes are recorded for in `_batchrun_schema`.
    package var file: String?

    package init(allowed: Bool = true, file: String? = nil) {
        self.allowed = allowed
        self.file = file
    }
}

/// Every schema change that cannot be made, each with its entity and column (a job file's
/// run shows them at their lines); `Store`'s public face throws them as `StoreError.schemaRefused`.
package struct SchemaRefusals: BatchRunError {
    package let refusals: [SchemaRefusal]

    package var code: String { storeError.code }
    package var message: String { description }
    package var isInvalid: Bool { true }

    package init(_ refusals: [SchemaRefusal]) {
        self.refusals = refusals
    }

    package var storeError: StoreError { .schemaRefused(refusals.map(\.message)) }

    package var description: String { storeError.description }
}

/// A schema change made, with its row in `_batchrun_schema` (a run links itself to it as it starts).
package struct AppliedSchemaChange: Sendable {
    package let change: SchemaChange
    package let recordID: Int64
}

/// `_batchrun_schema`: one row per schema change made (when, the run, the job file, the statement).
package enum SchemaHistory {
    package static let table = Entity(name: "_batchrun_schema", columns: [
        Column(name: "id", type: .integer, isPrimaryKey: true),
        Column(name: "applied_at", type: .text, notNull: true),
        Column(name: "run_id", type: .integer),
        Column(name: "file", type: .text),
        Column(name: "entity", type: .text, notNull: true),
        Column(name: "change", type: .text, notNull: true),
        Column(name: "statement", type: .text, notNull: true),
    ], primaryKey: ["id"])
}
