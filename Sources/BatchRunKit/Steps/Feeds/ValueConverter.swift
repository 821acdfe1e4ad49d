/// Converts feed and inline values to what a column stores, with the contract's messages:
/// `"abc" is not a real`.
///
/// ```swift
/// ValueConverter.convert(.text("12.5"), to: .real)     // .success(.real(12.5))
/// ValueConverter.convert(.text("yes"), to: .boolean)   // .failure("\"yes\" is not a boolean (true, false, 1 or 0)")
/// ```
public enum ValueConverter {
    public struct Problem: Error, Sendable, Equatable {
        public var message: String
    }

    public static func convert(_ value: StoreValue, to type: ColumnType) -> Result<StoreValue, Problem> {
        switch (value, type) {
        case (.null, _): return .success(.null)
        case (.text(let text), _): return convert(text: text, to: type)
        case (.integer, .integer), (.real, .real), (.blob, .blob): return .success(value)
        case (.integer(let int), .real): return .success(.real(Double(int)))
        case (.real(let double), .integer):
            if double.rounded() == double, let int = Int64(exactly: double) { return .success(.integer(int)) }
            return .failure(Problem(message: "\(double) is not an integer"))
        case (.integer(let int), .boolean):
            if int == 0 || int == 1 { return .success(value) }
            return .failure(Problem(message: "\(int) is not a boolean (true, false, 1 or 0)"))
        case (.integer, .text), (.real, .text): return .success(.text(value.description))
        case (.blob(let bytes), .text): return .success(.text(String(decoding: bytes, as: UTF8.self)))
        default:
            return .failure(Problem(message: "\(value) is not \(article(type)) \(type.rawValue)"))
        }
    }

    /// Text from a feed, parsed for the column's type.
    public static func convert(text: String, to type: ColumnType) -> Result<StoreValue, Problem> {
        switch type {
        case .text: return .success(.text(text))
        case .blob: return .success(.blob(Array(text.utf8)))
        case .integer:
            if let int = Int64(text) { return .success(.integer(int)) }
            if let double = Double(text), double.rounded() == double, let int = Int64(exactly: double),
               text.contains(".") { return .success(.integer(int)) }
            return .failure(Problem(message: "\"\(text)\" is not an integer"))
        case .real:
            if let double = Double(text), double.isFinite { return .success(.real(double)) }
            return .failure(Problem(message: "\"\(text)\" is not a real"))
        case .boolean:
            switch text.lowercased() {
            case "true", "1": return .success(.integer(1))
            case "false", "0": return .success(.integer(0))
            default: return .failure(Problem(message: "\"\(text)\" is not a boolean (true, false, 1 or 0)"))
            }
        case .datetime:
            if isISO8601(text) { return .success(.text(text)) }
            return .failure(Problem(message: "\"\(text)\" is not an ISO 8601 datetime (like 2026-01-31 or 2026-01-31T08:15:00Z)"))
        }
    }

    private static func article(_ type: ColumnType) -> String {
        type == .integer ? "an" : "a"
    }

    /// `YYYY-MM-DD`, optionally `T` or space, `HH:MM[:SS[.fff]]`, optionally `Z` or `±HH:MM`.
    static func isISO8601(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { isISO8601($0) }
    }

    static func isISO8601(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        func digits(_ start: Int, _ count: Int) -> Int? {
            guard start + count <= b.count else { return nil }
            var value = 0
            for i in start..<(start + count) {
                guard b[i] >= 48 && b[i] <= 57 else { return nil }
                value = value * 10 + Int(b[i] - 48)
            }
            return value
        }
        guard let _ = digits(0, 4), b.count >= 10, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"),
              let month = digits(5, 2), let day = digits(8, 2), (1...12).contains(month), (1...31).contains(day)
        else { return false }
        if b.count == 10 { return true }
        guard b[10] == UInt8(ascii: "T") || b[10] == UInt8(ascii: " "), let hour = digits(11, 2), hour < 24,
              b.count >= 16, b[13] == UInt8(ascii: ":"), let minute = digits(14, 2), minute < 60 else { return false }
        var i = 16
        if i < b.count && b[i] == UInt8(ascii: ":") {
            guard let second = digits(i + 1, 2), second < 61 else { return false }
            i += 3
            if i < b.count && b[i] == UInt8(ascii: ".") {
                i += 1
                let start = i
                while i < b.count && b[i] >= 48 && b[i] <= 57 { i += 1 }
                if i == start { return false }
            }
        }
        if i == b.count { return true }
        if b[i] == UInt8(ascii: "Z") { return i + 1 == b.count }
        if b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
            guard digits(i + 1, 2) != nil else { return false }
            let rest = b.count - (i + 3)
            if rest == 0 { return true }
            if rest == 3 { return b[i + 3] == UInt8(ascii: ":") && digits(i + 4, 2) != nil }
            if rest == 2 { return digits(i + 3, 2) != nil }
        }
        return false
    }
}
