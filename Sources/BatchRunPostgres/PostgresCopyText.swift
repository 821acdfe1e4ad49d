#if PostgreSQL
@_spi(BatchRunPackage) import BatchRunStore
import NIOCore

/// Rows of a `RowBatch` in `COPY ... FROM STDIN` text format: one line per row, columns
/// separated by tabs, `\N` for NULL, and backslash, tab, newline and carriage return escaped in
/// text; a blob as bytea's hex (`\\x...`). The server reads each field as its column's type, as
/// it reads untyped parameters.
///
/// ```swift
/// var buffer = ByteBuffer()
/// PostgresCopyText.append(rows, of: batch, extra: keys, to: &buffer)   // "1\tanna\t\\N\n..."
/// ```
enum PostgresCopyText {
    /// Appends `rows`, the i-th followed by the i-th of `extra` (keys the caller assigned) when given.
    /// Each row is written straight into the buffer's memory, room made once for its longest form
    /// (writing byte by byte through `ByteBuffer` cost a third of an import's client time).
    package static func append(_ rows: ArraySlice<Int>, of batch: RowBatch, extra: ArraySlice<Int64>? = nil, to buffer: inout ByteBuffer) {
        batch.bytes.withUnsafeBufferPointer { bytes in
            batch.cells.withUnsafeBufferPointer { cells in
                for (index, row) in rows.enumerated() {
                    let range = batch.cells(of: row)
                    var longest = 1 + (extra == nil ? 0 : 21)
                    for cell in range { longest += longestText(of: cells[cell]) + 1 }
                    buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: longest) { room in
                        var out = room.baseAddress!.assumingMemoryBound(to: UInt8.self)
                        let start = out
                        for cell in range {
                            if cell != range.lowerBound { out = put(UInt8(ascii: "\t"), at: out) }
                            out = write(cells[cell], bytes: bytes, at: out)
                        }
                        if let extra {
                            if !range.isEmpty { out = put(UInt8(ascii: "\t"), at: out) }
                            out = writeDigits(extra[extra.startIndex + index], at: out)
                        }
                        out = put(UInt8(ascii: "\n"), at: out)
                        return start.distance(to: out)
                    }
                }
            }
        }
    }

    /// The most bytes a cell's text form takes.
    private static func longestText(of cell: RowBatch.Cell) -> Int {
        switch cell.kind {
        case .null: return 2
        case .integer: return 20
        case .real: return 32
        case .text: return 2 * Int(cell.length)
        case .blob: return 3 + 2 * Int(cell.length)
        }
    }

    private static func put(_ byte: UInt8, at out: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        out.pointee = byte
        return out + 1
    }

    private static func put(_ text: StaticString, at out: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        out.update(from: text.utf8Start, count: text.utf8CodeUnitCount)
        return out + text.utf8CodeUnitCount
    }

    /// Two-digit pairs "00" to "99", for writing digits two at a time.
    private static let digitPairs: StaticString = """
        00010203040506070809101112131415161718192021222324252627282930313233343536373839\
        40414243444546474849505152535455565758596061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899
        """

    /// An integer's decimal digits, without making a String: counted by comparing, then
    /// written from the end two at a time (a division per digit, twice, was 5% of the client's time).
    private static func writeDigits(_ value: Int64, at out: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        let out = value < 0 ? put(UInt8(ascii: "-"), at: out) : out
        var magnitude = value.magnitude
        var count = 1
        var threshold: UInt64 = 10
        while count < 19 && magnitude >= threshold {   // Int64's magnitude has at most 19 digits
            count += 1
            threshold &*= 10
        }
        let pairs = digitPairs.utf8Start
        var digit = out + count
        while magnitude >= 100 {
            let pair = Int(magnitude % 100) &* 2
            magnitude /= 100
            digit -= 2
            digit[0] = pairs[pair]
            digit[1] = pairs[pair + 1]
        }
        if magnitude >= 10 {
            let pair = Int(magnitude) &* 2
            digit[-2] = pairs[pair]
            digit[-1] = pairs[pair + 1]
        } else {
            digit[-1] = UInt8(ascii: "0") + UInt8(magnitude)
        }
        return out + count
    }

    private static func write(_ cell: RowBatch.Cell, bytes: UnsafeBufferPointer<UInt8>,
                              at out: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        switch cell.kind {
        case .null:
            return put("\\N", at: out)
        case .integer:
            return writeDigits(cell.number, at: out)
        case .real:
            let value = Double(bitPattern: UInt64(bitPattern: cell.number))
            if value.isNaN { return put("NaN", at: out) }
            if value.isInfinite { return put(value > 0 ? "Infinity" : "-Infinity", at: out) }
            var text = value.description
            return text.withUTF8 { utf8 in
                out.update(from: utf8.baseAddress!, count: utf8.count)
                return out + utf8.count
            }
        case .text:
            var out = out
            for index in Int(cell.number)..<(Int(cell.number) + Int(cell.length)) {
                switch bytes[index] {
                case UInt8(ascii: "\\"): out = put("\\\\", at: out)
                case UInt8(ascii: "\t"): out = put("\\t", at: out)
                case UInt8(ascii: "\n"): out = put("\\n", at: out)
                case UInt8(ascii: "\r"): out = put("\\r", at: out)
                case let byte: out = put(byte, at: out)
                }
            }
            return out
        case .blob:
            let digits: StaticString = "0123456789abcdef"
            var out = put("\\\\x", at: out)
            for index in Int(cell.number)..<(Int(cell.number) + Int(cell.length)) {
                let byte = bytes[index]
                out = put(digits.utf8Start[Int(byte >> 4)], at: out)
                out = put(digits.utf8Start[Int(byte & 0x0f)], at: out)
            }
            return out
        }
    }
}
#endif
