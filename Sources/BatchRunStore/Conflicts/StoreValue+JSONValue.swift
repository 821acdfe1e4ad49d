/// A stored value as the JSON report writes it (a blob as its hex text).
extension StoreValue {
    var jsonValue: JSONValue {
        switch self {
        case .null: return .null
        case .integer(let value): return .integer(value)
        case .real(let value): return .real(value)
        case .text(let value): return .text(value)
        case .blob: return .text(description)
        }
    }
}
