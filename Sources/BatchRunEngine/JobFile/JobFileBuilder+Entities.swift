import BatchRunStore

/// `entities:` — the model.
extension JobFileBuilder {
    static let entityKeys = ["columns", "primary_key", "unique", "indexes", "table"]
    static let columnModifiers = ["primary key", "not null", "unique", "default", "was", "references", "on delete"]

    mutating func entities(_ node: YAMLNode) -> Model {
        var result: [Entity] = []
        let entries = reader.namedEntries(node, "entities")
        if entries.isEmpty && node.mapping != nil { reader.error(node, "entities must declare at least one entity") }
        for (name, key, value) in entries {
            guard Self.isName(name) else {
                reader.error(key, "entity name '\(name)' must match [A-Za-z_][A-Za-z0-9_-]*")
                continue
            }
            if let entity = entity(name, value) { result.append(entity) }
            declarations[name] = key.location
        }
        return resolvingReferences(Model(entities: result))
    }

    /// The model with each column's `references` as a relationship of its entity; a reference
    /// that cannot be one is an error at the referenced name.
    mutating func resolvingReferences(_ model: Model) -> Model {
        var resolved = model
        for reference in references {
            switch reference.relationship(in: model) {
            case .success(let relationship):
                if let index = resolved.entities.firstIndex(where: { $0.name == reference.entity }) {
                    resolved.entities[index].relationships.append(relationship)
                }
            case .failure(let problem):
                reader.error(at: reference.at, problem.message)
            }
        }
        references = []
        return resolved
    }

    mutating func entity(_ name: String, _ node: YAMLNode) -> Entity? {
        let what = "entity \(name)"
        guard let fields = reader.mapping(node, what, allowed: Self.entityKeys, required: ["columns"]),
              let columnsNode = fields["columns"] else { return nil }
        var columns: [Column] = []
        var columnKeys: [String: YAMLNode] = [:]
        for (columnName, key, spec) in reader.namedEntries(columnsNode, "\(what) columns") {
            guard Self.isName(columnName, allowingDash: false) else {
                reader.error(key, "column name '\(columnName)' must be letters, digits and _ (starting with a letter or _)")
                continue
            }
            if columns.contains(where: { $0.name.lowercased() == columnName.lowercased() }) {
                reader.error(key, "column '\(columnName)' is declared twice")
                continue
            }
            if let (column, reference) = column(columnName, spec) {
                columns.append(column)
                if let reference { references.append(ColumnReference(entity: name, column: columnName, destination: reference.entity,
                                                                     rule: reference.rule, at: reference.at)) }
            }
            columnKeys[columnName] = key
            declarations["\(name).\(columnName)"] = key.location
        }
        if columns.isEmpty { return nil }
        checkRenames(columns, keys: columnKeys)
        let names = columns.map(\.name)
        func checked(_ group: [(String, YAMLNode)], _ what: String) -> [String]? {
            var ok = true
            for (column, node) in group where !names.contains(column) {
                reader.error(node, "\(what) names unknown column '\(column)' of entity \(name)" + Suggestion.hint(for: column, in: names))
                ok = false
            }
            return ok && !group.isEmpty ? group.map(\.0) : nil
        }
        var primaryKey = columns.filter(\.isPrimaryKey).map(\.name)
        if let node = fields["primary_key"] {
            if !primaryKey.isEmpty {
                reader.error(node, "entity \(name) has both primary_key and a column marked 'primary key'; keep one")
            }
            primaryKey = reader.stringList(node, "primary_key").flatMap { checked($0, "primary_key") } ?? []
        } else if primaryKey.count > 1 {
            reader.error(fields.node, "entity \(name) marks several columns 'primary key'; use primary_key: [\(primaryKey.joined(separator: ", "))]")
        }
        if primaryKey.isEmpty && fields["primary_key"] == nil {
            reader.error(fields.keys["columns"] ?? node,
                         "entity \(name) has no primary key; mark one column 'primary key' or add primary_key: [a, b]")
        }
        let uniques = fields["unique"].map { reader.nameGroups($0, "unique").compactMap { checked($0, "unique") } } ?? []
        let indexes = fields["indexes"].map { reader.nameGroups($0, "indexes").compactMap { checked($0, "indexes") } } ?? []
        var table: String?
        if let node = fields["table"], let text = reader.string(node, "table") {
            if text.lowercased().hasPrefix("_batchrun_") || text.lowercased().hasPrefix("sqlite_") {
                reader.error(node, "table name '\(text)' is reserved (names starting with _batchrun_ or sqlite_)")
            }
            table = text
        }
        if name.lowercased().hasPrefix("_batchrun_") || name.lowercased().hasPrefix("sqlite_") {
            reader.error(node, "entity name '\(name)' is reserved (names starting with _batchrun_ or sqlite_)")
        }
        return Entity(name: name, table: table ?? store?.defaultTableName(forEntity: name), columns: columns, primaryKey: primaryKey, uniques: uniques, indexes: indexes)
    }


    /// A rename keeps one column: its earlier name may not be declared too (that would drop
    /// it), nor be the earlier name of two columns.
    func checkRenames(_ columns: [Column], keys: [String: YAMLNode]) {
        var claimed: [String: String] = [:]
        for column in columns {
            guard let earlier = column.renamedFrom else { continue }
            guard let at = keys[column.name] else { continue }
            if let declared = columns.first(where: { $0.name.lowercased() == earlier.lowercased() }) {
                reader.error(at, "column \(column.name) says it was \(earlier), but \(declared.name) is still declared; a rename keeps one column "
                    + "(batchrun never drops a column): remove \(declared.name), or remove 'was \(earlier)'")
            } else if let other = claimed[earlier.lowercased()] {
                reader.error(at, "columns \(other) and \(column.name) both say they were \(earlier); one column can be renamed only once")
            }
            claimed[earlier.lowercased()] = column.name
        }
    }

    /// Parses `TYPE [primary key] [not null] [unique] [default LITERAL] [was OLD_NAME]
    /// [references ENTITY [on delete ACTION]]`, pointing errors at the word; the reference is
    /// resolved once every entity is read.
    func column(_ name: String, _ node: YAMLNode) -> (Column, (entity: String, rule: DeleteRule, at: SourceLocation)?)? {
        guard let spec = reader.string(node, "column \(name) (like 'text not null')") else { return nil }
        let words = ColumnSpecTokenizer.words(spec)
        // Point at the word inside the scalar when the scalar is written on one line.
        func location(_ offset: Int) -> SourceLocation {
            if case .scalar(_, let plain) = node.content, !spec.contains("\n") {
                return node.location.advanced(by: offset + (plain ? 0 : 1))
            }
            return node.location
        }
        guard let first = words.first else {
            reader.error(node, "column \(name) needs a type (one of \(ColumnType.allCases.map(\.rawValue).joined(separator: ", ")))")
            return nil
        }
        let typeNames = ColumnType.allCases.map(\.rawValue)
        guard let type = ColumnType(rawValue: first.text.lowercased()) else {
            reader.error(at: location(first.offset), "unknown column type '\(first.text)' for column \(name)"
                + Suggestion.hint(for: first.text, in: typeNames) + " (one of \(typeNames.joined(separator: ", ")))")
            return nil
        }
        var column = Column(name: name, type: type)
        var reference: (entity: String, rule: DeleteRule, at: SourceLocation)?
        var index = 1
        while index < words.count {
            let word = words[index]
            let lower = word.text.lowercased()
            let next = index + 1 < words.count ? words[index + 1].text.lowercased() : nil
            switch (lower, next) {
            case ("primary", "key"): column.isPrimaryKey = true; index += 2
            case ("not", "null"): column.notNull = true; index += 2
            case ("unique", _): column.isUnique = true; index += 1
            case ("was", _):
                guard index + 1 < words.count, Self.isName(words[index + 1].text, allowingDash: false) else {
                    reader.error(at: location(word.offset), "'was' needs the column's earlier name for column \(name) (like 'text was name')")
                    return nil
                }
                let earlier = words[index + 1].text
                guard earlier.lowercased() != name.lowercased() else {
                    reader.error(at: location(words[index + 1].offset), "column \(name) cannot say it was itself; drop 'was \(earlier)'")
                    return nil
                }
                column.renamedFrom = earlier
                index += 2
            case ("references", _):
                guard index + 1 < words.count, Self.isName(words[index + 1].text) else {
                    reader.error(at: location(word.offset), "'references' needs an entity's name for column \(name) (like 'integer references Airline')")
                    return nil
                }
                reference = (words[index + 1].text, .deny, location(words[index + 1].offset))
                index += 2
            case ("on", _):
                let rest = words[(index + 1)...].map { $0.text.lowercased() }
                guard reference != nil, rest.first == "delete",
                      let action = ColumnReference.actions.first(where: { rest.dropFirst().starts(with: $0.words) }) else {
                    reader.error(at: location(word.offset), "column \(name): expected 'on delete cascade', 'on delete set null', "
                        + "'on delete restrict' or 'on delete no action' after 'references ENTITY'")
                    return nil
                }
                reference?.rule = action.rule
                index += 2 + action.words.count
            case ("default", _):
                guard index + 1 < words.count else {
                    reader.error(at: location(word.offset), "'default' needs a value for column \(name)")
                    return nil
                }
                let literal = words[index + 1]
                guard ColumnSpecTokenizer.isLiteral(literal.text) else {
                    reader.error(at: location(literal.offset), "default for column \(name) must be a literal (a number, 'quoted text', NULL, TRUE, FALSE or CURRENT_TIMESTAMP), found \(literal.text)")
                    return nil
                }
                column.defaultLiteral = literal.text
                index += 2
            default:
                reader.error(at: location(word.offset), "unexpected '\(word.text)' in column \(name)"
                    + Suggestion.hint(for: word.text + (next.map { " " + $0 } ?? ""), in: Self.columnModifiers)
                    + "; expected TYPE [primary key] [not null] [unique] [default LITERAL] [was OLD_NAME] [references ENTITY [on delete ACTION]]")
                return nil
            }
        }
        return (column, reference)
    }
}

/// Splits a column spec into words, keeping a quoted default literal whole.
enum ColumnSpecTokenizer {
    struct Word {
        package var text: String
        /// Characters from the start of the spec.
        package var offset: Int
    }

    package static func words(_ spec: String) -> [Word] {
        var words: [Word] = []
        let characters = Array(spec)
        var index = 0
        while index < characters.count {
            if characters[index].isWhitespace { index += 1; continue }
            let start = index
            if characters[index] == "'" {
                index += 1
                while index < characters.count {
                    if characters[index] == "'" {
                        if index + 1 < characters.count && characters[index + 1] == "'" { index += 2; continue }
                        index += 1
                        break
                    }
                    index += 1
                }
            } else {
                while index < characters.count && !characters[index].isWhitespace { index += 1 }
            }
            words.append(Word(text: String(characters[start..<index]), offset: start))
        }
        return words
    }

    static func isLiteral(_ text: String) -> Bool {
        if ["null", "true", "false", "current_timestamp", "current_date", "current_time"].contains(text.lowercased()) {
            return true
        }
        if text.wholeMatch(of: /[-+]?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?/) != nil { return true }
        if text.count >= 2, text.hasPrefix("'"), text.hasSuffix("'") {
            let inner = text.dropFirst().dropLast()
            return !inner.replacingOccurrences(of: "''", with: "").contains("'")
        }
        return false
    }
}
