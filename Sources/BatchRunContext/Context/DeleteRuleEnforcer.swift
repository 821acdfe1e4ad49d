import BatchRunStore

/// The model's delete rules, enforced inside a save's transaction after the save's own writes:
/// for every row the save deleted, the rows referencing it are deleted (`cascade`, and what
/// references those, by their rules), get NULL (`nullify`), or refuse the save (`deny`,
/// `ContextError.deleteDenied`: the transaction rolls back, nothing written). The rows written
/// are recorded in the save's changes, so its `DidSave` and the change log name them as any
/// row the save changed; the counts stay those of the rows the save was asked to change.
/// Works on tables without constraints: nothing is declared in the database.
struct DeleteRuleEnforcer {
    /// What the rules changed, for the saving context's own registered objects.
    struct Effects {
        package var deleted: [ObjectID] = []
        package var nullified: [(id: ObjectID, column: Int)] = []
        package var isEmpty: Bool { deleted.isEmpty && nullified.isEmpty }
    }

    package let model: Model
    package let db: any StoreConnection
    /// Keys per statement: well under what both databases bind.
    var keysPerStatement = 500

    func enforce(_ changes: inout SaveChanges) throws -> Effects {
        var effects = Effects()
        // Sorted by name, so that a save does the same in every run (a Set has no order).
        var pending = changes.entitiesWithDeletes.sorted().filter { !model.links(into: $0).isEmpty }
            .map { (entity: $0, keys: changes.deletedKeys(of: $0)) }
        var denied: [(link: Model.Link, entity: String, keys: [StoreValue])] = []
        while let (entity, keys) = pending.popLast() {
            guard !keys.isEmpty else { continue }
            for link in model.links(into: entity) {
                if link.relationship.deleteRule == .deny {
                    denied.append((link, entity, keys))
                    continue
                }
                let reached = try apply(link, deleting: keys, of: entity, into: &changes, effects: &effects)
                if !reached.isEmpty, link.source.primaryKey.count == 1 { pending.append((link.source.name, reached)) }
            }
        }
        // Denials are counted once every cascade has run, as SQL's NO ACTION checks at the
        // statement's end: a referencing row the same save deleted (itself or by a cascade) does
        // not count, whichever entity's rules ran first.
        for (link, entity, keys) in denied {
            let referencing = try count(link, referencing: keys)
            if referencing > 0 {
                throw ContextError.deleteDenied(entity: entity, relationship: "\(link.source.name).\(link.relationship.name)", count: referencing)
            }
        }
        return effects
    }

    /// The rows of `link`'s source that still reference one of `keys`.
    private func count(_ link: Model.Link, referencing keys: [StoreValue]) throws -> Int {
        let table = SQL.quote(link.source.tableName), column = SQL.quote(link.source.columns[link.column].name)
        var referencing = 0
        for start in stride(from: 0, to: keys.count, by: keysPerStatement) {
            let chunk = Array(keys[start..<min(start + keysPerStatement, keys.count)])
            let match = "\(column) IN (" + Array(repeating: "?", count: chunk.count).joined(separator: ", ") + ")"
            referencing += try db.value("SELECT count(*) FROM \(table) WHERE \(match)", SQLArguments(chunk))?.int ?? 0
        }
        return referencing
    }

    /// Applies one relationship's `cascade` or `nullify` for deleted `keys` of `entity`; returns
    /// the keys of the source rows it deleted (a cascade's), whose own referencing rows come next.
    private func apply(_ link: Model.Link, deleting keys: [StoreValue], of entity: String,
                       into changes: inout SaveChanges, effects: inout Effects) throws -> [StoreValue] {
        let source = link.source
        // The column as the table names it (a relationship may spell it in another case).
        let table = SQL.quote(source.tableName), column = SQL.quote(source.columns[link.column].name)
        let keyColumns = SQL.quoteList(source.primaryKey)
        var deleted: [StoreValue] = []
        for start in stride(from: 0, to: keys.count, by: keysPerStatement) {
            let chunk = Array(keys[start..<min(start + keysPerStatement, keys.count)])
            let match = "\(column) IN (" + Array(repeating: "?", count: chunk.count).joined(separator: ", ") + ")"
            switch link.relationship.deleteRule {
            case .deny:
                break   // counted by `enforce` once every cascade has run
            case .nullify:
                try db.forEachRow("UPDATE \(table) SET \(column) = NULL WHERE \(match) RETURNING \(keyColumns)", SQLArguments(chunk)) { key in
                    let id = ObjectID(entity: source.name, key: key)
                    changes.record(id, .updated)
                    effects.nullified.append((id, link.column))
                }
            case .cascade:
                try db.forEachRow("DELETE FROM \(table) WHERE \(match) RETURNING \(keyColumns)", SQLArguments(chunk)) { key in
                    let id = ObjectID(entity: source.name, key: key)
                    changes.record(id, .deleted)
                    effects.deleted.append(id)
                    if key.count == 1 { deleted.append(key[0]) }
                }
            }
        }
        return deleted
    }
}
