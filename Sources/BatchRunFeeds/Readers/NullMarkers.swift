import Foundation

/// An insert step's spellings of NULL (`nulls:`, by default the empty field for CSV and TSV),
/// matched against a field's bytes without making a string: by length first, then the bytes.
package struct NullMarkers: Sendable {
    private let markers: [[UInt8]]

    package init(_ spellings: [String]) {
        markers = spellings.map { Array($0.utf8) }
    }

    package func matches(_ field: UnsafeBufferPointer<UInt8>) -> Bool {
        for marker in markers where marker.count == field.count {
            if field.isEmpty { return true }
            // The first byte before a call: most fields of a marker's length are not it.
            if marker[0] == field[0],
               marker.withUnsafeBufferPointer({ memcmp($0.baseAddress!, field.baseAddress!, field.count) }) == 0 { return true }
        }
        return false
    }

    package func matches(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { matches($0) }
    }
}
