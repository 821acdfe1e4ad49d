import BatchRunStore
import GRDB

/// SQLite's result codes as the kinds of failure the layers above act on.
extension DatabaseError: StoreDatabaseError {
    package var storeFailure: StoreFailure? {
        switch resultCode {
        case .SQLITE_INTERRUPT: return .interrupted
        case .SQLITE_BUSY, .SQLITE_LOCKED: return .busy
        case .SQLITE_FULL: return .diskFull
        case .SQLITE_READONLY: return .readOnly
        default: return nil
        }
    }

    package var databaseMessage: String { message ?? "\(self)" }
}
