import BatchRunSQLite
import BatchRunStore
#if PostgreSQL
import BatchRunPostgres
#endif

/// Where a store's kind becomes code: the backend module that opens it. It sits above both
/// backends (BatchRunSQLite, BatchRunPostgres), which sit above the vocabulary they share.
extension StoreSpec {
    /// The backend that implements this kind of store: the one place a kind becomes code.
    /// Throws for PostgreSQL in a build without the `PostgreSQL` trait.
    package func backend() throws(StoreError) -> any StoreBackend.Type {
        switch kind {
        case .sqlite:
            return SQLiteBackend.self
        case .postgres:
            #if PostgreSQL
            return PostgresBackend.self
            #else
            throw StoreError.cannotOpen(path: path, reason: "this build of BatchRunKit has no PostgreSQL support (the package's PostgreSQL trait is off)")
            #endif
        }
    }

    /// Whether this store and the one at `location` are the same database reached with the
    /// same credentials and connection security (`StoreBackend.connectionIdentity`); false
    /// when they are of different kinds or either cannot be read.
    ///
    /// ```swift
    /// StoreSpec(location: "postgresql://batch@db/nightly").isSameConnection(as: "postgresql://batch@db:5432/nightly")   // true
    /// ```
    package func isSameConnection(as location: String) -> Bool {
        let other = StoreSpec(location: location)
        guard other.kind == kind, let backend = try? backend(),
              let mine = try? backend.connectionIdentity(location: path),
              let theirs = try? backend.connectionIdentity(location: location) else { return false }
        return mine == theirs
    }

    /// The table an entity declared without `table:` lives in: its name, folded to lowercase
    /// where the database folds the unquoted names expressions use (PostgreSQL).
    package func defaultTableName(forEntity name: String) -> String {
        (try? backend().foldsUnquotedNames) == true ? name.lowercased() : name
    }

    /// A checker that prepares expressions against `model` as this store's database reads them,
    /// without opening the store: SQLite's on an empty in-memory copy of the model, PostgreSQL's
    /// on the server in a transaction it rolls back.
    package func makeExpressionChecker(model: Model) throws -> any ExpressionChecking {
        try backend().makeExpressionChecker(location: path, model: model)
    }
}
