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

    /// An error at each scalar of the file (key or value) that holds one of `roleEscapes`,
    /// when the worker runs items with `--item-role`.
    func refuseRoleEscapes(_ root: YAMLNode) {
        guard let role = loader.rules?.itemRole else { return }
        var pending = [root]
        while let node = pending.popLast() {
            if let pairs = node.mapping {
                for pair in pairs { pending += [pair.value, pair.key] }
            } else if let items = node.sequence {
                pending += items.reversed()
            } else if let text = node.scalarText?.lowercased(),
                      let escape = Self.roleEscapes.first(where: { text.contains($0.text) }) {
                reader.error(node, "\(escape.why): this worker runs items' SQL as the role \(role) (--item-role) and refuses "
                    + "'\(escape.text)' in an item")
            }
        }
    }
}
