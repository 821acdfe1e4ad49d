import Foundation
import GRDB

/// Why a store could not be opened or used.
public enum StoreError: Error, Sendable, CustomStringConvertible {
    /// Existing tables lack declared columns: `(entity, table, missing columns)`.
    case schemaMismatch([(entity: String, table: String, missing: [String])])
    case cannotOpen(path: String, reason: String)

    /// SQLite's error as a user can act on it: which lock and for how long, a full disk, a
    /// read-only file system, a file that is not a database.
    static func reason(for error: DatabaseError, busyTimeout: Double) -> String {
        switch error.resultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return "another connection held the store's write lock for longer than busy_timeout (\(seconds(busyTimeout)))"
        case .SQLITE_FULL:
            return "the disk is full"
        case .SQLITE_READONLY:
            return "the store cannot be written (\(error.message ?? "read-only"))"
        case .SQLITE_NOTADB:
            return "the file is not an SQLite database"
        case .SQLITE_CANTOPEN:
            return "cannot open the file (\(error.message ?? "unable to open database file"))"
        default:
            return error.message ?? "\(error)"
        }
    }

    /// The reason, or that the store's folder is on a read-only file system when it is (SQLite
    /// then says only that it cannot open or write the file).
    static func reason(for error: DatabaseError, busyTimeout: Double, path: String) -> String {
        if [.SQLITE_READONLY, .SQLITE_CANTOPEN, .SQLITE_IOERR].contains(error.resultCode) && isOnReadOnlyFileSystem(path) {
            return "the store is on a read-only file system"
        }
        return reason(for: error, busyTimeout: busyTimeout)
    }

    static func isOnReadOnlyFileSystem(_ path: String) -> Bool {
        var info = statvfs()
        let folder = (path as NSString).deletingLastPathComponent
        guard statvfs(folder.isEmpty ? "." : folder, &info) == 0 else { return false }
        return info.f_flag & UInt(ST_RDONLY) != 0
    }

    /// `250ms`, `5s`, like the job file writes durations.
    static func seconds(_ value: Double) -> String {
        value < 1 ? "\(Int((value * 1000).rounded()))ms" : (value == value.rounded() ? "\(Int(value))s" : "\(value)s")
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
        }
    }
}
