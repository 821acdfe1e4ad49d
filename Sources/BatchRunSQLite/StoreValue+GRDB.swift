import BatchRunStore
import Foundation
import GRDB

extension StoreValue {
    /// The value as GRDB binds it.
    var databaseValue: DatabaseValue {
        switch self {
        case .null: return .null
        case .integer(let value): return value.databaseValue
        case .real(let value): return value.databaseValue
        case .text(let value): return value.databaseValue
        case .blob(let bytes): return Data(bytes).databaseValue
        }
    }

    /// A value read from SQLite.
    package init(_ value: DatabaseValue) {
        switch value.storage {
        case .null: self = .null
        case .int64(let int): self = .integer(int)
        case .double(let double): self = .real(double)
        case .string(let string): self = .text(string)
        case .blob(let data): self = .blob([UInt8](data))
        }
    }
}

extension Dictionary where Key == String, Value == StoreValue {
    /// Named statement arguments: `:name` gets `self["name"]`.
    var statementArguments: StatementArguments {
        StatementArguments(mapValues(\.databaseValue))
    }
}
