/// SQL text built once per distinct key, for statements whose shape varies row to row.
///
/// ```swift
/// let texts = SQLCache()
/// let sql = texts.sql(for: changedColumns) { "UPDATE ..." }
/// ```
final class SQLCache {
    private var texts: [[Int]: String] = [:]

    package func sql(for key: [Int], _ build: () -> String) -> String {
        if let text = texts[key] { return text }
        let text = build()
        texts[key] = text
        return text
    }
}
