/// The type of a column as declared in a job file.
public enum ColumnType: String, Sendable, CaseIterable {
    case integer, real, text, blob, boolean, datetime

    /// The type written in `CREATE TABLE`; its affinity keeps values as declared.
    /// `boolean` is stored as 0/1 and `datetime` as ISO 8601 text.
    package var sqlType: String {
        switch self {
        case .integer, .boolean: return "INTEGER"
        case .real: return "REAL"
        case .text, .datetime: return "TEXT"
        case .blob: return "BLOB"
        }
    }
}
