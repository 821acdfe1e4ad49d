import Foundation
import Testing
@testable import BatchRunKit

/// `JSONText`, the one JSON writer (fetch outputs, the report's conflicts, log lines): strings
/// escaped byte for byte as `JSONEncoder` escapes them, numbers as each output has written them.
@Suite("JSON text")
struct JSONTextTests {
    /// `value` as `JSONEncoder` writes it (inside an array: a top-level fragment is refused on some platforms).
    static func encoded<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        let array = String(decoding: try encoder.encode([value]), as: UTF8.self)
        return String(array.dropFirst().dropLast())
    }

    @Test("every control character, quotes and backslashes are escaped as JSONEncoder escapes them")
    func controlCharacters() throws {
        for code in 0..<0x20 {
            let text = "a" + String(Character(Unicode.Scalar(UInt8(code)))) + "b"
            #expect(JSONText.string(text) == (try Self.encoded(text)), "U+\(String(code, radix: 16))")
        }
        #expect(JSONText.string("\u{00}\u{08}\u{0C}\u{1F}\t\n\r") == #""\u0000\b\f\u001f\t\n\r""#)
        #expect(JSONText.string(#"say "hi" \ \\n"#) == #""say \"hi\" \\ \\\\n""#)
        #expect(JSONText.string("") == "\"\"")
    }

    @Test("everything else is written as it is: slashes, DEL, non-ASCII, U+2028 and U+2029, emoji")
    func asItIs() throws {
        let text = "a/b \u{7F} é ü ✓ \u{2028}\u{2029} 😀 日本"
        #expect(JSONText.string(text) == "\"" + text + "\"")
        #expect(JSONText.string(text) == (try Self.encoded(text)))
        // And what is written reads back as the text.
        let mixed = "\u{01}\"\\/é\u{2028}\n😀"
        let decoded = try JSONDecoder().decode([String].self, from: Data(("[" + JSONText.string(mixed) + "]").utf8))
        #expect(decoded == [mixed])
    }

    @Test("integers: every digit, the smallest and largest Int64 included")
    func integers() throws {
        for value: Int64 in [0, 7, -7, 10, -10, 1_000_003, Int64.max, Int64.min, Int64.min + 1] {
            #expect(JSONText.value(.integer(value)) == String(value))
        }
    }

    @Test("doubles: the shortest form that reads back; `.0` kept for outputs and dropped as JSONEncoder drops it; null when not finite")
    func doubles() throws {
        let values = [0.0, -0.0, 2.0, -0.5, 0.1, 1e-7, 1e-05, 12345678.9, 1.5e20, 1e16, 123456789012345678.0,
                      Double.leastNonzeroMagnitude, Double.greatestFiniteMagnitude]
        for double in values {
            #expect(JSONText.value(.real(double)) == "\(double)")
            var json = JSONText()
            json.real(double, dropsPointZero: true)
            #expect(json.text == (try Self.encoded(double)), "\(double)")
            #expect(Double(json.text) == double)
        }
        for double in [Double.nan, .infinity, -.infinity] {
            #expect(JSONText.value(.real(double)) == "null")
            var json = JSONText()
            json.real(double, dropsPointZero: true)
            #expect(json.text == "null")
        }
    }

    @Test("store values: null, text, a blob in Base64")
    func storeValues() {
        #expect(JSONText.value(.null) == "null")
        #expect(JSONText.value(.text("x\"y")) == #""x\"y""#)
        #expect(JSONText.value(.blob([0, 1, 2, 255])) == #""AAEC/w==""#)
    }

    @Test("values written one after another grow the text past its first room, and it can be emptied and written again")
    func grows() {
        var json = JSONText(capacity: 8)
        json.raw("[")
        for index in 0..<1_000 {
            if index > 0 { json.raw(",") }
            json.string(String(repeating: "\u{01}", count: index % 7))
            json.raw(","); json.integer(Int64(index))
        }
        json.raw("]")
        let decoded = try? JSONSerialization.jsonObject(with: Data(json.text.utf8)) as? [Any]
        #expect(decoded?.count == 2_000)
        #expect(json.count == json.text.utf8.count)
        json.removeAll()
        json.value(.integer(5))
        #expect(json.text == "5")
    }
}
