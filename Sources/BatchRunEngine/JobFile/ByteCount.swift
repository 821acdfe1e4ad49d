import Foundation

/// A size as the command line takes it: bytes, or a number with a decimal (`kB`, `MB`, `GB`,
/// `TB`) or binary (`KiB`, `MiB`, `GiB`, `TiB`) unit; case-insensitive, optional `B`.
///
/// ```swift
/// ByteCount.parse("500MB")   // 500_000_000
/// ByteCount.parse("2GiB")    // 2_147_483_648
/// ```
package enum ByteCount {
    /// The bytes `text` names, or nil when it names no positive size that fits in 63 bits.
    package static func parse(_ text: String) -> Int64? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let digits = trimmed.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
        guard !digits.isEmpty, let number = Double(digits), number > 0 else { return nil }
        var unit = trimmed.dropFirst(digits.count).trimmingCharacters(in: .whitespaces).lowercased()
        if unit.hasSuffix("b") { unit.removeLast() }
        let scale: Double
        switch unit {
        case "": scale = 1
        case "k": scale = 1e3
        case "m": scale = 1e6
        case "g": scale = 1e9
        case "t": scale = 1e12
        case "ki": scale = 1024
        case "mi": scale = 1024 * 1024
        case "gi": scale = 1024 * 1024 * 1024
        case "ti": scale = 1024 * 1024 * 1024 * 1024
        default: return nil
        }
        let bytes = (number * scale).rounded(.down)
        guard bytes >= 1, bytes < 9.2e18 else { return nil }
        return Int64(bytes)
    }
}
