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
    /// Appends `rows`, each followed by `extra[i]` (keys the caller assigned) when given.
    static func append(_ rows: ArraySlice<Int>, of batch: RowBatch, extra: [Int64]? = nil, to buffer: inout ByteBuffer) {
        batch.bytes.withUnsafeBufferPointer { bytes in
            for (index, row) in rows.enumerated() {
                var first = true
                for cell in batch.cells(of: row) {
                    if !first { buffer.writeInteger(UInt8(ascii: "\t")) }
                    first = false
                    append(batch.cells[cell], bytes: bytes, to: &buffer)
                }
                if let extra {
                    if !first { buffer.writeInteger(UInt8(ascii: "\t")) }
                    appendDigits(extra[index], to: &buffer)
                }
                buffer.writeInteger(UInt8(ascii: "\n"))
            }
        }
    }

    /// An integer's decimal digits, without making a String.
    private static func appendDigits(_ value: Int64, to buffer: inout ByteBuffer) {
        if value < 0 { buffer.writeInteger(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)   // 24 bytes: room for 20 digits
        var count = 0
        withUnsafeMutableBytes(of: &digits) { scratch in
            repeat {
                scratch[23 - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            buffer.writeBytes(UnsafeRawBufferPointer(rebasing: scratch[(24 - count)...]))
        }
    }

    private static func append(_ cell: RowBatch.Cell, bytes: UnsafeBufferPointer<UInt8>, to buffer: inout ByteBuffer) {
        switch cell.kind {
        case .null:
            buffer.writeStaticString("\\N")
        case .integer:
            appendDigits(cell.number, to: &buffer)
        case .real:
            let value = Double(bitPattern: UInt64(bitPattern: cell.number))
            if value.isNaN {
                buffer.writeStaticString("NaN")
            } else if value.isInfinite {
                buffer.writeStaticString(value > 0 ? "Infinity" : "-Infinity")
            } else {
                buffer.writeString(value.description)
            }
        case .text:
            let start = Int(cell.number), end = start + Int(cell.length)
            var clean = start
            for index in start..<end {
                let escaped: StaticString
                switch bytes[index] {
                case UInt8(ascii: "\\"): escaped = "\\\\"
                case UInt8(ascii: "\t"): escaped = "\\t"
                case UInt8(ascii: "\n"): escaped = "\\n"
                case UInt8(ascii: "\r"): escaped = "\\r"
                default: continue
                }
                buffer.writeBytes(UnsafeBufferPointer(rebasing: bytes[clean..<index]))
                buffer.writeStaticString(escaped)
                clean = index + 1
            }
            buffer.writeBytes(UnsafeBufferPointer(rebasing: bytes[clean..<end]))
        case .blob:
            let digits: StaticString = "0123456789abcdef"
            buffer.writeStaticString("\\\\x")
            let start = Int(cell.number)
            for index in start..<(start + Int(cell.length)) {
                let byte = bytes[index]
                digits.withUTF8Buffer { hex in
                    buffer.writeInteger(hex[Int(byte >> 4)])
                    buffer.writeInteger(hex[Int(byte & 0x0f)])
                }
            }
        }
    }
}
