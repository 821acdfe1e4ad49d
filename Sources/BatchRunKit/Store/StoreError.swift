/// Why a store could not be opened or used.
public enum StoreError: Error, Sendable, CustomStringConvertible {
    /// Existing tables lack declared columns: `(entity, table, missing columns)`.
    case schemaMismatch([(entity: String, table: String, missing: [String])])
    case cannotOpen(path: String, reason: String)
    /// A write's `WriteFence` found no row: nothing of the transaction was committed.
    case fenced(String)

    public var description: String {
        switch self {
        case .schemaMismatch(let mismatches):
            return mismatches.map { item in
                "table \(item.table) (entity \(item.entity)) exists but lacks declared column"
                    + (item.missing.count == 1 ? " " : "s ") + item.missing.joined(separator: ", ")
            }.joined(separator: "\n")
        case .cannotOpen(let path, let reason):
            return "cannot open store \(path): \(reason)"
        case .fenced(let refusal):
            return "\(refusal); nothing of this batch was committed"
        }
    }
}
