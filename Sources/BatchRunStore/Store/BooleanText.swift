/// The one rule for a boolean written as text, in feeds and in stored text: `true`, `false`,
/// `1` or `0`, in any case, read byte by byte (lowercasing a `String` per field was 3% of an
/// import's client time).
///
/// ```swift
/// BooleanText.value(of: "TRUE")   // true
/// BooleanText.value(of: "yes")    // nil
/// ```
package enum BooleanText {
    /// The boolean `text` spells, or nil.
    package static func value(of bytes: UnsafeBufferPointer<UInt8>) -> Bool? {
        func spells(_ word: StaticString) -> Bool {
            guard bytes.count == word.utf8CodeUnitCount else { return false }
            for index in 0..<bytes.count where bytes[index] | 0x20 != word.utf8Start[index] { return false }
            return true
        }
        if bytes.count == 1 { return bytes[0] == UInt8(ascii: "1") ? true : bytes[0] == UInt8(ascii: "0") ? false : nil }
        return spells("true") ? true : spells("false") ? false : nil
    }

    /// The boolean `text` spells, or nil.
    package static func value(of text: String) -> Bool? {
        var text = text
        return text.withUTF8 { value(of: $0) }
    }
}
