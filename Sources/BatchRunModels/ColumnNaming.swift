/// How a model's property names become column names, set once for all the models of a
/// `Model(_:columnNames:)`: as written, or snake_case (`departsAt` is `departs_at`). A to-one's
/// column adds the key's suffix: `airlineID` as written, `airline_id` in snake_case.
///
/// ```swift
/// let model = try Model(Airline.self, Flight.self, columnNames: .snakeCase)
/// ```
public enum ColumnNaming: Sendable {
    /// The property's name as written: `departs`, `airlineID`.
    case asWritten
    /// snake_case: `departs_at`, `airline_id`.
    case snakeCase

    /// The column of a property holding a value.
    ///
    /// ```swift
    /// ColumnNaming.snakeCase.column(for: "departsAt")   // "departs_at"
    /// ```
    public func column(for property: String) -> String {
        switch self {
        case .asWritten: return property
        case .snakeCase: return Self.snakeCased(property)
        }
    }

    /// The column of a to-one relationship: it holds the other row's key.
    ///
    /// ```swift
    /// ColumnNaming.snakeCase.foreignKey(for: "airline")   // "airline_id"
    /// ```
    public func foreignKey(for property: String) -> String {
        switch self {
        case .asWritten: return property + "ID"
        case .snakeCase: return Self.snakeCased(property) + "_id"
        }
    }

    /// `departsAt` → `departs_at`, `flightURL` → `flight_url`, `id` → `id`.
    static func snakeCased(_ name: String) -> String {
        let characters = Array(name)
        var result = ""
        for (index, character) in characters.enumerated() {
            if character.isUppercase {
                let previous = index > 0 ? characters[index - 1] : nil
                let next = index + 1 < characters.count ? characters[index + 1] : nil
                let startsWord = previous.map { $0.isLowercase || $0.isNumber } ?? false
                let endsAcronym = (previous?.isUppercase ?? false) && (next?.isLowercase ?? false)
                if index > 0 && (startsWord || endsAcronym) { result += "_" }
                result += character.lowercased()
            } else {
                result.append(character)
            }
        }
        return result
    }
}
