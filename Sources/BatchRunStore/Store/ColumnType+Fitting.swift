/// What a value written to a column of each type may be (every object write is checked).
extension ColumnType {
    /// `value` as a column of this type stores it, or nil when it does not fit: NULL fits any
    /// column (a `not null` column refuses it at save); an integer fits `integer`, and `real`
    /// as a real; a real fits `real`; text fits `text`, and `datetime` when it is ISO 8601 (as
    /// a `Date` is stored); a blob fits `blob`; 0 and 1 (as a `Bool` is stored) fit `boolean`.
    ///
    /// ```swift
    /// ColumnType.real.fitting(3)          // .real(3.0)
    /// ColumnType.real.fitting("abc")      // nil
    /// ColumnType.datetime.fitting(StoreValue(Date()))   // the ISO 8601 text
    /// ```
    package func fitting(_ value: StoreValue) -> StoreValue? {
        if case .null = value { return value }
        switch self {
        case .integer:
            if case .integer = value { return value }
        case .real:
            if case .real = value { return value }
            if case .integer(let int) = value { return .real(Double(int)) }
        case .text:
            if case .text = value { return value }
        case .blob:
            if case .blob = value { return value }
        case .boolean:
            if case .integer(let int) = value, int == 0 || int == 1 { return value }
        case .datetime:
            if case .text(let text) = value, ISO8601Text.isValid(text) { return value }
        }
        return nil
    }

    /// What to give a column of this type, for error messages.
    package var whatFits: String {
        switch self {
        case .integer: "an integer"
        case .real: "a real or an integer"
        case .text: "text"
        case .blob: "a blob (Data or bytes)"
        case .boolean: "a Bool (stored as 0 or 1)"
        case .datetime: "a Date, or ISO 8601 text like 2026-01-31T08:15:00Z"
        }
    }
}
