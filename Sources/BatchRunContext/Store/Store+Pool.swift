import BatchRunSQLite
import GRDB

extension Store {
    /// GRDB's pool of an SQLite store, for the tests (everything else reads and writes through
    /// `backend`, as a `StoreConnection`).
    package var pool: DatabasePool { (backend as! SQLiteBackend).pool }
}
