extension String {
    /// Whether the text matches a SQL `LIKE` pattern: `%` any text, `_` one character, the case
    /// of ASCII letters ignored (as SQLite's `LIKE`). In a `#Filter` it is the database's own
    /// `LIKE` (PostgreSQL's minds the case).
    ///
    /// ```swift
    /// #Filter<Flight> { $0.number.like("BA%") }
    /// "BA117".like("ba%")   // true
    /// ```
    public func like(_ pattern: String) -> Bool {
        let text = Array(lowercasedASCII), pattern = Array(pattern.lowercasedASCII)
        // Dynamic programming over (text, pattern) positions: matches[i] for the text's first i characters.
        var matches = [Bool](repeating: false, count: text.count + 1)
        matches[0] = true
        for symbol in pattern {
            var next = [Bool](repeating: false, count: text.count + 1)
            if symbol == "%" {
                var any = false
                for index in 0...text.count {
                    any = any || matches[index]
                    next[index] = any
                }
            } else {
                for index in 1...max(1, text.count) where index <= text.count && matches[index - 1] {
                    next[index] = symbol == "_" || text[index - 1] == symbol
                }
            }
            matches = next
        }
        return matches[text.count]
    }

    private var lowercasedASCII: String {
        String(map { $0.isASCII ? Character($0.lowercased()) : $0 })
    }
}
