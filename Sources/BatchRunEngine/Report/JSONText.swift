import BatchRunStore
import Foundation

/// The package's one JSON writer: UTF-8 bytes, one value at a time, for fetch outputs (JSON and
/// NDJSON), the JSON report's conflicts and log lines. Strings are escaped as `JSONEncoder`
/// escapes them: `"` and `\`, control characters as `\n`, `\r`, `\t`, `\b`, `\f` or `\u00XX`,
/// everything else as it is (`/`, non-ASCII, U+2028 and U+2029). Integers are their digits;
/// doubles their shortest form, or null when not finite (JSON has no NaN or infinity).
///
/// ```swift
/// JSONText.string("say \"hi\"\n")     // "\"say \\\"hi\\\"\\n\""
/// var json = JSONText()
/// json.raw("{"); json.string("n"); json.raw(": "); json.value(.real(2)); json.raw("}")
/// json.text                           // "{\"n\": 2.0}"
/// ```
package struct JSONText: ~Copyable {
    /// What was written: `storage[0..<count]`; written through a pointer, grown as needed.
    private var storage: UnsafeMutableRawBufferPointer
    /// Bytes written so far.
    package private(set) var count = 0

    package init(capacity: Int = 256) {
        storage = .allocate(byteCount: max(capacity, 64), alignment: 1)
    }

    deinit {
        storage.deallocate()
    }

    /// What was written, as text.
    package var text: String {
        String(decoding: UnsafeRawBufferPointer(rebasing: storage[0..<count]), as: UTF8.self)
    }

    /// `body` given the bytes written so far.
    package func withBytes<T>(_ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        try body(UnsafeRawBufferPointer(rebasing: storage[0..<count]))
    }

    /// Forgets what was written, keeping the room.
    package mutating func removeAll() {
        count = 0
    }

    // MARK: Writing

    // `raw` and `reserve` are inlined into their callers: a report of 200,000 conflicts makes
    // about 8 million of these calls, which cost it a quarter more instructions (callgrind).

    /// JSON's own text as it is: punctuation, `null`, a layout's spaces.
    @inline(__always)
    package mutating func raw(_ text: StaticString) {
        raw(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Bytes that are JSON already (a string written once and kept), as they are.
    @inline(__always)
    package mutating func raw(_ bytes: UnsafeRawBufferPointer) {
        reserve(bytes.count)
        UnsafeMutableRawBufferPointer(rebasing: storage[count...]).copyMemory(from: bytes)
        count += bytes.count
    }

    /// `text` as a JSON string, quotes included.
    package mutating func string(_ text: String) {
        var text = text
        text.withUTF8 { string(UnsafeRawBufferPointer($0)) }
    }

    /// UTF-8 bytes as a JSON string, quotes included. Only ASCII bytes are escaped, so UTF-8
    /// sequences pass through whole.
    package mutating func string(_ utf8: UnsafeRawBufferPointer) {
        guard utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) else {
            reserve(utf8.count + 2)
            put(0x22)
            UnsafeMutableRawBufferPointer(rebasing: storage[count...]).copyMemory(from: utf8)
            count += utf8.count
            put(0x22)
            return
        }
        reserve(6 * utf8.count + 2)   // every byte as `\u00XX` at most
        put(0x22)
        for byte in utf8 {
            switch byte {
            case 0x22: put(0x5C); put(0x22)   // \"
            case 0x5C: put(0x5C); put(0x5C)   // \\
            case 0x0A: put(0x5C); put(0x6E)   // \n
            case 0x0D: put(0x5C); put(0x72)   // \r
            case 0x09: put(0x5C); put(0x74)   // \t
            case 0x08: put(0x5C); put(0x62)   // \b
            case 0x0C: put(0x5C); put(0x66)   // \f
            case ..<0x20:                     // \u00XX, in lowercase as JSONEncoder writes it
                put(0x5C); put(0x75); put(0x30); put(0x30)
                put(Self.hexDigits.utf8Start[Int(byte >> 4)])
                put(Self.hexDigits.utf8Start[Int(byte & 0x0F)])
            default: put(byte)
            }
        }
        put(0x22)
    }

    /// An integer's decimal digits, without making a string of them.
    package mutating func integer(_ value: Int64) {
        reserve(20)   // a sign and 19 digits
        if value < 0 { put(0x2D) }
        var magnitude = value.magnitude
        var digits = 1
        var rest = magnitude / 10
        while rest > 0 { digits += 1; rest /= 10 }
        count += digits
        var at = count
        repeat {   // the last digit first, from the end back
            at -= 1
            storage[at] = UInt8(truncatingIfNeeded: magnitude % 10) + 0x30
            magnitude /= 10
        } while magnitude > 0
    }

    /// A double in its shortest form that reads back the same (`0.1`, `1e-05`, `2.0`), or `null`
    /// when it is not finite. `dropsPointZero` writes a whole number without its `.0` (`2`), as
    /// `JSONEncoder` does: the report's conflicts sit among its output.
    package mutating func real(_ double: Double, dropsPointZero: Bool = false) {
        guard double.isFinite else { return raw("null") }
        var text = String(double)
        if dropsPointZero && text.hasSuffix(".0") { text.removeLast(2) }
        text.withUTF8 { raw(UnsafeRawBufferPointer($0)) }
    }

    /// A store value: `null`, its number, its text, or a blob's bytes in Base64 as a string.
    package mutating func value(_ value: StoreValue) {
        switch value {
        case .null: raw("null")
        case .integer(let int): integer(int)
        case .real(let double): real(double)
        case .text(let text): string(text)
        case .blob(let bytes): string(Data(bytes).base64EncodedString())
        }
    }

    // MARK: One value as text

    /// `text` as a JSON string, quotes included.
    package static func string(_ text: String) -> String {
        var json = JSONText(capacity: text.utf8.count + 16)
        json.string(text)
        return json.text
    }

    /// A store value as JSON (see `value(_:)`).
    package static func value(_ value: StoreValue) -> String {
        var json = JSONText(capacity: 64)
        json.value(value)
        return json.text
    }

    private static let hexDigits: StaticString = "0123456789abcdef"

    // MARK: Room

    /// Makes room for `more` bytes.
    @inline(__always)
    private mutating func reserve(_ more: Int) {
        if count + more > storage.count { grow(toFit: more) }
    }

    /// Doubles the storage (at least) so that `more` bytes fit.
    private mutating func grow(toFit more: Int) {
        let grown = UnsafeMutableRawBufferPointer.allocate(byteCount: max(2 * storage.count, count + more), alignment: 1)
        grown.copyMemory(from: UnsafeRawBufferPointer(rebasing: storage[0..<count]))
        storage.deallocate()
        storage = grown
    }

    /// One byte, where `reserve` made room for it.
    private mutating func put(_ byte: UInt8) {
        storage[count] = byte
        count += 1
    }
}
