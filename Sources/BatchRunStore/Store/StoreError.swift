/// Why a store could not be opened or used.
public enum StoreError: BatchRunError {
    /// True when the job file does not fit the store (exit status 2), not the store that failed.
    package var isSchemaRefusal: Bool {
        switch self {
        case .schemaRefused, .schemaChangesRefused: true
        case .cannotOpen, .fenced, .missingParameter, .database: false
        }
    }

    /// The store's tables cannot become what the model declares without dropping, retyping or
    /// breaking something (each message says what and what to do); nothing was changed.
    case schemaRefused([String])
    /// The store's tables lack what the model declares, and schema changes are refused
    /// (`--no-schema-changes`, `schema_changes: refuse`); nothing was changed.
    case schemaChangesRefused([SchemaChange])
    case cannotOpen(path: String, reason: String)
    /// A write's `WriteFence` found no row: nothing of the transaction was committed.
    case fenced(String)
    /// A statement's `:name` placeholder has no value in the request's `params`: nothing ran.
    case missingParameter(String)
    /// The database refused or failed a statement (a syntax error, a constraint, a lock held
    /// too long, a lost connection): its own message, without its client library's types.
    case database(DatabaseFailure)

    package var code: String {
        switch self {
        case .schemaRefused: "store.schema-refused"
        case .schemaChangesRefused: "store.schema-changes-refused"
        case .cannotOpen: "store.cannot-open"
        case .fenced: "store.fenced"
        case .missingParameter: "store.missing-parameter"
        case .database: "store.database"
        }
    }

    package var message: String { description }

    /// Tables that cannot hold the job file's model: the job file is what is wrong for this store.
    package var isInvalid: Bool { isSchemaRefusal }

    public var description: String {
        switch self {
        case .schemaRefused(let refusals):
            return refusals.joined(separator: "\n") + "\nthe store's schema was not changed"
        case .schemaChangesRefused(let changes):
            return "the store lacks what the job file declares, and schema changes are refused "
                + "(--no-schema-changes or schema_changes: refuse); a run would:\n"
                + changes.map { "  \($0.entity): \($0.summary(made: false))" }.joined(separator: "\n")
                + "\nrun without --no-schema-changes (or with schema_changes: apply) to make them; the store was not changed"
        case .cannotOpen(let path, let reason):
            return "cannot open store \(path): \(reason)"
        case .fenced(let refusal):
            return "\(refusal); nothing of this batch was committed"
        case .missingParameter(let name):
            return "the statement uses :\(name), but params has no \"\(name)\": give it a value (StoreValue.null for NULL)"
        case .database(let failure):
            return failure.description
        }
    }
}
