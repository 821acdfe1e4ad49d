import Foundation

/// An insert step's spellings of NULL (`nulls:`, by default the empty field for CSV and TSV),
/// matched against a field's bytes without making a string: by length first, then the bytes.
/// The spellings are kept in one byte array, so matching a cell reference-counts nothing (an
/// array of arrays retained each spelling it looked at, once per cell).
///
/// ```swift
/// let nulls = NullMarkers(["NA", ""])
/// nulls.matches("NA")   // true
/// ```
package struct NullMarkers: Sendable {
    /// Every spelling's bytes, one after another.
    private let spelled: [UInt8]
    /// Where each spelling is in `spelled`.
    private let spans: [Range<Int>]

    package init(_ spellings: [String]) {
        var spelled: [UInt8] = [], spans: [Range<Int>] = []
        for spelling in spellings {
            spans.append(spelled.count..<spelled.count + spelling.utf8.count)
            spelled += spelling.utf8
        }
        self.spelled = spelled
        self.spans = spans
    }

    package func matches(_ field: UnsafeBufferPointer<UInt8>) -> Bool {
        spans.withUnsafeBufferPointer { spans in
            for span in spans where span.count == field.count {
                if field.isEmpty { return true }
                // The first byte before a call: most fields of a spelling's length are not it.
                let matched = spelled.withUnsafeBufferPointer { spelled in
                    spelled[span.lowerBound] == field[0] && memcmp(spelled.baseAddress! + span.lowerBound, field.baseAddress!, field.count) == 0
                }
                if matched { return true }
            }
            return false
        }
    }

    package func matches(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { matches($0) }
    }
}
