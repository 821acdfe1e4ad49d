#if PostgreSQL
@_spi(BatchRunPackage) import BatchRunStore
import NIOCore

/// Rows of a `RowBatch` in `COPY ... FROM STDIN (FORMAT binary)`: the server takes each value
/// as it is stored (a bigint's 8 bytes, a double's bits, a text's bytes) instead of parsing its
/// text, which was most of its time importing numbers and datetimes (2,000,000 rows of six
/// columns: 2.1 s by psql's `\copy` of the binary form against 2.7 s of the CSV). Only for rows
/// whose every value reads the same either way (`instants`); other rows go as text
/// (`PostgresCopyText`), and the server reads them, errors included, as before.
///
/// ```swift
/// let types: [PostgresCopyBinary.ServerType] = [.int8, .text, .timestamptz]   // the table's, from the server
/// if let instants = PostgresCopyBinary.instants(rows, of: batch, types: types, zonelessIsUTC: true) {
///     var buffer = ByteBuffer(bytes: PostgresCopyBinary.header)
///     PostgresCopyBinary.append(rows, of: batch, types: types, instants: instants, to: &buffer)
///     buffer.writeBytes(PostgresCopyBinary.trailer)
/// }
/// ```
enum PostgresCopyBinary {
    /// The stream's start: the signature, no flags, no header extension.
    static let header: [UInt8] = Array("PGCOPY\n".utf8) + [0xFF, 0x0D, 0x0A, 0x00, 0, 0, 0, 0, 0, 0, 0, 0]
    /// The stream's end: a row of -1 fields.
    static let trailer: [UInt8] = [0xFF, 0xFF]

    /// Microseconds from 1970-01-01 to PostgreSQL's epoch, 2000-01-01 (UTC).
    private static let epochOffset: Int64 = 946_684_800_000_000

    /// A column's type in the table as the server has it (a table made elsewhere may have an
    /// `integer` where batchrun makes a `bigint`): the ones whose binary form batchrun writes.
    enum ServerType: Sendable {
        case int8, int4, int2, float8, text, bytea, bool, timestamptz

        /// The type of `oid` (`pg_type`), or nil: the column takes text only (numeric, a
        /// `timestamp` without a zone, which ignores a zone the text gives, real, json, ...).
        init?(oid: Int64) {
            switch oid {
            case 20: self = .int8
            case 23: self = .int4
            case 21: self = .int2
            case 701: self = .float8
            case 25, 1043: self = .text   // text, varchar (its length checked on receipt as on input)
            case 17: self = .bytea
            case 16: self = .bool
            case 1184: self = .timestamptz
            default: return nil
            }
        }
    }

    /// Whether every cell of `rows` has a binary form for its column's type (`types`, one per
    /// cell, then the `extra` key's) that the server reads as it reads the cell's text: an
    /// integer in the column's range for `int8`, `int4` and `int2`, and 0 or 1 for `bool`, an
    /// integer or a real for `float8`, a text for `text`, a blob for `bytea`, a plain instant for
    /// `timestamptz` (`ISO8601Text.unixMicroseconds`; a zone-less one only when the session's
    /// time zone is UTC), NULL for any. Nil when one has not; else the instants of the
    /// `timestamptz` columns, row by row (`stampsPerRow` a row, 0 for a NULL), read once here
    /// for `append` to write.
    static func instants(_ rows: ArraySlice<Int>, of batch: RowBatch, types: [ServerType], zonelessIsUTC: Bool,
                         extra: [Int64]? = nil) -> [Int64]? {
        guard !rows.isEmpty else { return nil }   // a stream needs its header and trailer: text then
        if let extra {
            guard let keyType = types.last, extra.allSatisfy({ key in
                fits(RowBatch.Cell(number: key, length: 0, kind: .integer), keyType)
            }) else { return nil }
        }
        let perRow = stampsPerRow(types)
        var instants: [Int64] = []
        instants.reserveCapacity(rows.count * perRow)
        let fit = batch.bytes.withUnsafeBufferPointer { bytes in
            batch.cells.withUnsafeBufferPointer { cells in
                for row in rows {
                    let range = batch.cells(of: row)
                    guard range.count <= types.count else { return false }
                    let rowStart = instants.count
                    for (type, cell) in zip(types, range) {
                        let cell = cells[cell]
                        if type == .timestamptz, cell.kind == .text {
                            guard let instant = ISO8601Text.unixMicroseconds(text(of: cell, in: bytes), zonelessIsUTC: zonelessIsUTC)
                            else { return false }
                            instants.append(instant)
                        } else if !fits(cell, type) {
                            return false
                        } else if type == .timestamptz {
                            instants.append(0)   // a NULL's place
                        }
                    }
                    // A row without the last columns (the `extra` key's): their places.
                    while instants.count < rowStart + perRow { instants.append(0) }
                }
                return true
            }
        }
        return fit ? instants : nil
    }

    /// How many of `types` are `timestamptz`: a row's share of `instants`.
    static func stampsPerRow(_ types: [ServerType]) -> Int {
        types.count { $0 == .timestamptz }
    }

    /// Whether a cell that is not a `timestamptz`'s text has `type`'s binary form (`instants`).
    private static func fits(_ cell: RowBatch.Cell, _ type: ServerType) -> Bool {
        switch (type, cell.kind) {
        case (_, .null), (.int8, .integer), (.float8, .integer), (.float8, .real), (.text, .text), (.bytea, .blob):
            return true
        case (.int4, .integer):
            return Int32(exactly: cell.number) != nil
        case (.int2, .integer):
            return Int16(exactly: cell.number) != nil
        case (.bool, .integer):
            return cell.number == 0 || cell.number == 1
        default:
            return false
        }
    }

    private static func text(of cell: RowBatch.Cell, in bytes: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: bytes[Int(cell.number)..<(Int(cell.number) + Int(cell.length))])
    }

    /// Appends `rows`, the i-th followed by the i-th of `extra` when given, each written straight
    /// into the buffer's memory; `instants`: what `instants` gave for these rows, from the first
    /// one's (`stampsPerRow` a row).
    static func append(_ rows: ArraySlice<Int>, of batch: RowBatch, types: [ServerType], instants: ArraySlice<Int64>,
                       extra: ArraySlice<Int64>? = nil, to buffer: inout ByteBuffer) {
        let perRow = stampsPerRow(types)
        let extraType = types.last ?? .int8
        batch.bytes.withUnsafeBufferPointer { bytes in
            batch.cells.withUnsafeBufferPointer { cells in
                for (index, row) in rows.enumerated() {
                    let range = batch.cells(of: row)
                    var longest = 2 + (extra == nil ? 0 : 12)
                    for cell in range { longest += 12 + (cells[cell].kind == .text || cells[cell].kind == .blob ? Int(cells[cell].length) : 0) }
                    buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: longest) { room in
                        let start = room.baseAddress!
                        var out = start
                        out = put(Int16(range.count + (extra == nil ? 0 : 1)), at: out)
                        var nextInstant = instants.startIndex + index * perRow
                        for (type, cell) in zip(types, range) {
                            let cell = cells[cell]
                            if type == .timestamptz, cell.kind == .text {
                                out = put(instants[nextInstant] - epochOffset, at: put(Int32(8), at: out))
                            } else {
                                out = write(cell, as: type, bytes: bytes, at: out)
                            }
                            if type == .timestamptz { nextInstant += 1 }
                        }
                        if let extra {
                            let key = RowBatch.Cell(number: extra[extra.startIndex + index], length: 0, kind: .integer)
                            out = write(key, as: extraType, bytes: bytes, at: out)
                        }
                        return start.distance(to: out)
                    }
                }
            }
        }
    }

    private static func put<T: FixedWidthInteger>(_ value: T, at out: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer {
        out.storeBytes(of: value.bigEndian, as: T.self)
        return out + MemoryLayout<T>.size
    }

    /// A cell that is not a `timestamptz`'s text (`append` writes those from `instants`).
    private static func write(_ cell: RowBatch.Cell, as type: ServerType, bytes: UnsafeBufferPointer<UInt8>,
                              at out: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer {
        switch (type, cell.kind) {
        case (_, .null):
            return put(Int32(-1), at: out)
        case (.bool, _):
            return put(UInt8(cell.number), at: put(Int32(1), at: out))
        case (.int4, _):
            return put(Int32(cell.number), at: put(Int32(4), at: out))
        case (.int2, _):
            return put(Int16(cell.number), at: put(Int32(2), at: out))
        case (.float8, .integer):
            return put(Double(cell.number).bitPattern, at: put(Int32(8), at: out))
        case (_, .integer), (_, .real):   // an int8, or a float8's bit pattern
            return put(cell.number, at: put(Int32(8), at: out))
        case (_, .text), (_, .blob):
            let out = put(Int32(cell.length), at: out)
            if cell.length > 0 { out.copyMemory(from: bytes.baseAddress! + Int(cell.number), byteCount: Int(cell.length)) }
            return out + Int(cell.length)
        }
    }
}
#endif
