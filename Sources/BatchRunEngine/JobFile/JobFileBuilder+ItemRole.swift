import BatchRunStore

/// `worker --item-role ROLE` (JOBFILE.md section 15, "A confined worker": databases): an item's
/// SQL runs as that role, batchrun's own statements on its `_batchrun_` tables as the worker's
/// user (`PostgresStoreConnection.itemRole`). So no item may write `_batchrun_` anywhere (its
/// SQL would be taken for batchrun's own), nor call what changes the session's role
/// (`set_config('role', ...)`) or runs SQL text it builds (`query_to_xml`, `ts_stat`, ...,
/// which could call it), nor spell a name with Unicode escapes (`U&"..."`) that hide them.
extension JobFileBuilder {
    /// What an item under `--item-role` may not write, lowercased, and why.
    static let roleEscapes: [(text: String, why: String)] = [
        ("_batchrun_", "names starting with _batchrun_ are batchrun's own run state and queue"),
        ("set_config", "set_config can change the role the item's SQL runs as"),
        ("query_to_xml", "query_to_xml runs SQL text it is given"),
        ("cursor_to_xml", "cursor_to_xml runs SQL text it is given"),
        ("ts_stat", "ts_stat runs SQL text it is given"),
        ("ts_rewrite", "ts_rewrite runs SQL text it is given"),
        ("dblink", "dblink runs SQL on another connection"),
        ("u&\"", "a U&\"...\" name can spell any name unseen"),
        ("u&'", "a U&'...' string can spell any text unseen"),
    ]

    /// Keys whose values never reach SQL as text: data (bound as values), paths, URLs, headers, hooks.
    static let keysWithoutSQL: Set<String> = ["rows", "from", "headers", "params", "store", "ca_file", "output", "nulls",
                                              "on_success", "on_failure", "on_complete", "description"]

    /// An error at each scalar of the file (key or value, outside `keysWithoutSQL`) that holds
    /// one of `roleEscapes` (a function's name as a whole word), when the worker runs items
    /// with `--item-role`.
    func refuseRoleEscapes(_ root: YAMLNode) {
        guard let role = loader.rules?.itemRole else { return }
        var pending = [root]
        while let node = pending.popLast() {
            if let pairs = node.mapping {
                for pair in pairs where !Self.keysWithoutSQL.contains(pair.key.scalarText ?? "") { pending += [pair.value, pair.key] }
            } else if let items = node.sequence {
                pending += items.reversed()
            } else if let text = node.scalarText?.lowercased(), let escape = Self.roleEscapes.first(where: { Self.holds(text, $0.text) }) {
                reader.error(node, "\(escape.why): this worker runs items' SQL as the role \(role) (--item-role) and refuses "
                    + "'\(escape.text)' in an item")
            }
        }
    }

    /// True when `text` holds `escape`: anywhere for `_batchrun_` and the `U&` escapes, as a
    /// whole word (not part of a longer name) for a function's name.
    static func holds(_ text: String, _ escape: String) -> Bool {
        guard escape.first?.isLetter == true, escape.last?.isLetter == true else { return text.contains(escape) }
        var rest = text[...]
        while let found = rest.range(of: escape) {
            let before = found.lowerBound == text.startIndex ? nil : text[text.index(before: found.lowerBound)]
            let after = found.upperBound == text.endIndex ? nil : text[found.upperBound]
            if !isNamePart(before) && !isNamePart(after) { return true }
            rest = text[found.upperBound...]
        }
        return false
    }

    /// True for a character that may be part of an SQL name (so `ts_stats` does not hold `ts_stat`).
    private static func isNamePart(_ character: Character?) -> Bool {
        character.map { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "$" } ?? false
    }
}
