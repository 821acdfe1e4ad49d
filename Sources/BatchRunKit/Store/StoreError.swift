/// Why a store could not be opened or used.
public enum StoreError: BatchRunError {
    /// Existing tables lack declared columns: `(entity, table, missing columns)`.
    case schemaMismatch([(entity: String, table: String, missing: [String])])
    case cannotOpen(path: String, reason: String)
    /// A write's `WriteFence` found no row: nothing of the transaction was committed.
    case fenced(String)

    package var code: String {
        switch self {
        case .schemaMismatch: "store.schema-mismatch"
        case .cannotOpen: "store.cannot-open"
        case .fenced: "store.fenced"
        }
    }

    package var message: String { description }

    /// Tables that do not match the job file: the job file is what is wrong for this store.
    package var isInvalid: Bool {
        if case .schemaMismatch = self { return true }
        return false
    }

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
