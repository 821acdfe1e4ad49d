/// Finds the known word a mistyped one most likely meant, for "did you mean" hints.
///
/// ```swift
/// Suggestion.closest(to: "job", in: ["version", "jobs"])            // "jobs"
/// Suggestion.closest(to: "object_trump", in: MergePolicy.names)    // "object-trump"
/// Suggestion.closest(to: "filter", in: ["entity", "where"])        // "where"
/// ```
package enum Suggestion {
    /// Words users reach for from other tools (SQL, Core Data, dbt), mapped to ours.
    package static let synonyms: [String: [String]] = [
        "filter": ["where"], "condition": ["where"], "predicate": ["where"],
        "update": ["batch-update", "set"], "batch_update": ["batch-update"],
        "batchupdate": ["batch-update"], "remove": ["delete"], "select": ["fetch", "select"],
        "query": ["fetch"], "read": ["fetch"], "load": ["insert"], "import": ["insert"],
        "depends_on": ["needs"], "depends-on": ["needs"], "dependencies": ["needs"],
        "after": ["needs"], "requires": ["needs"], "table": ["entity", "table"],
        "file": ["from"], "source": ["from"], "sort": ["order_by"], "order": ["order_by"],
        "orderby": ["order_by"], "groupby": ["group_by"], "columns": ["columns", "select"],
        "values": ["set", "rows"], "data": ["rows", "from"], "output_file": ["output"],
        "mergepolicy": ["merge_policy"], "policy": ["merge_policy"], "batch": ["batch_size"],
        "batchsize": ["batch_size"], "db": ["store"], "database": ["store"], "path": ["sqlite"],
        "string": ["text"], "varchar": ["text"], "int": ["integer"], "bigint": ["integer"],
        "float": ["real"], "double": ["real"], "number": ["real"], "bool": ["boolean"],
        "timestamp": ["datetime"], "date": ["datetime"], "bytes": ["blob"], "primary": ["primary key"],
        "pk": ["primary key"], "nullable": ["not null"], "notnull": ["not null"], "primarykey": ["primary_key"],
        "index": ["indexes"], "uniques": ["unique"], "deps": ["needs"], "on_error": ["on_failure"],
        "on_fail": ["on_failure"], "on_done": ["on_complete"], "on_finish": ["on_complete"],
    ]

    package static func closest(to word: String, in candidates: [String]) -> String? {
        // No keyword is this long; and edit distances on a huge word cost its length times each candidate's.
        guard word.count <= 64 else { return nil }
        let lower = word.lowercased()
        if let mapped = synonyms[lower]?.first(where: candidates.contains) { return mapped }
        if lower.count >= 4, let near = synonyms.first(where: { editDistance($0.key, lower) == 1 }),
           let mapped = near.value.first(where: candidates.contains) { return mapped }
        let normalized = normalize(lower)
        if let same = candidates.first(where: { normalize($0.lowercased()) == normalized }) { return same }
        var best: (word: String, distance: Int)?
        for candidate in candidates {
            let distance = editDistance(lower, candidate.lowercased())
            if distance < (best?.distance ?? Int.max) { best = (candidate, distance) }
        }
        if let best, best.distance <= max(1, min(3, (word.count + 1) / 3)) { return best.word }
        if lower.count >= 4, let containing = candidates.first(where: {
            $0.lowercased().contains(lower) || lower.contains($0.lowercased())
        }) { return containing }
        return nil
    }

    /// ` ; did you mean 'X'?` or nothing.
    package static func hint(for word: String, in candidates: [String]) -> String {
        closest(to: word, in: candidates).map { "; did you mean '\($0)'?" } ?? ""
    }

    private static func normalize(_ word: String) -> String {
        String(word.filter { $0 != "_" && $0 != "-" && $0 != " " })
    }

    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        // Optimal string alignment: insertions, deletions, substitutions and swaps of neighbours.
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }
}
