/// The text of inserts and upserts, in the SQL both backends read; the object inserter, the
/// save writer and both bulk loaders build theirs here.
///
/// ```swift
/// InsertSQL.insert(entity, columns: ["id", "status"], rows: 2)
/// // INSERT INTO "Session" ("id", "status") VALUES (?, coalesce(?, 'open')), (?, coalesce(?, 'open'))
/// ```
package enum InsertSQL {
    /// `INSERT INTO t (columns) VALUES (...), ...` for `rows` rows. A NULL for a NOT NULL column
    /// with a default takes the default; `assignedKey`, when given, is the placeholder of an
    /// integer key the store assigns when the value is NULL.
    package static func insert(_ entity: Entity, columns: [String], rows: Int, assignedKey: String? = nil) -> String {
        let tuple = "(" + columns.map { name -> String in
            if let assignedKey, entity.hasRowidKey, name == entity.primaryKey[0] { return assignedKey }
            if let column = entity.column(named: name), column.notNull, let literal = column.defaultLiteral {
                return "coalesce(?, \(literal))"
            }
            return "?"
        }.joined(separator: ", ") + ")"
        return "INSERT INTO \(SQL.quote(entity.tableName)) (\(SQL.quoteList(columns))) VALUES "
            + Array(repeating: tuple, count: rows).joined(separator: ", ")
    }

    /// `INSERT ... ON CONFLICT (key) DO UPDATE`: every fed column takes ours (`.ours`), or ours
    /// only where the stored value is NULL (`.fillNulls`). A NULL for a NOT NULL column with a
    /// default takes the default.
    package static func upsert(_ entity: Entity, columns: [String], rows: Int, _ resolution: BulkResolution) -> String {
        let table = SQL.quote(entity.tableName)
        // A NULL for a NOT NULL column with a default takes the default here too: `excluded`
        // holds it, so the conflict's update writes the default, not the NULL.
        let plain = "(" + columns.map { name -> String in
            if let column = entity.column(named: name), column.notNull, let literal = column.defaultLiteral {
                return "coalesce(?, \(literal))"
            }
            return "?"
        }.joined(separator: ", ") + ")"
        return "INSERT INTO \(table) (\(SQL.quoteList(columns))) VALUES " + Array(repeating: plain, count: rows).joined(separator: ", ")
            + onConflict(entity, columns: columns, resolution)
    }

    /// ` ON CONFLICT (key) DO UPDATE SET ...`, the clause every upsert ends with (this one's, and
    /// a PostgreSQL bulk load's `INSERT ... SELECT`): every fed column but the key takes ours
    /// (`.ours`), or ours only where the stored value is NULL (`.fillNulls`).
    ///
    /// ```swift
    /// InsertSQL.onConflict(entity, columns: ["id", "status"], .ours)
    /// // " ON CONFLICT ("id") DO UPDATE SET "status" = excluded."status""
    /// ```
    package static func onConflict(_ entity: Entity, columns: [String], _ resolution: BulkResolution) -> String {
        let table = SQL.quote(entity.tableName)
        let set = columns.filter { !entity.primaryKey.contains($0) }.map(SQL.quote).map { column in
            resolution == .fillNulls ? "\(column) = coalesce(\(table).\(column), excluded.\(column))" : "\(column) = excluded.\(column)"
        }
        return " ON CONFLICT (\(SQL.quoteList(entity.primaryKey))) DO UPDATE SET " + set.joined(separator: ", ")
    }
}
