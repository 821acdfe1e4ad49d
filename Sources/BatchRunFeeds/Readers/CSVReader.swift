import BatchRunStore
import Foundation

/// One CSV or TSV row as bytes, and where each field's value lies in them. Reused from row to
/// row, so reading a feed allocates nothing per row.
///
/// ```swift
/// var row = RawRow()
/// while try reader.nextRow(into: &row) { print(row.line, row.string(0), row.range(of: 1)) }
/// ```
package struct RawRow: Sendable {
    /// The row as read, delimiters and quotes included (a quoted field's doubled quotes undone in
    /// place): read a field through `range(of:)` or `string(_:)`, not by position.
    package internal(set) var bytes: [UInt8] = []
    /// Field `i`'s value is `bytes[bounds[2 * i]..<bounds[2 * i + 1]]` (`range(of:)`): one array,
    /// filled a row at a time (an append per field was a tenth of the reader's instructions).
    private var bounds: [Int] = []
    /// The line the row starts on.
    package var line = 0

    package init() {}

    package var count: Int { bounds.count / 2 }

    package func range(of field: Int) -> Range<Int> {
        bounds[2 * field]..<bounds[2 * field + 1]
    }

    package func string(_ field: Int) -> String {
        String(decoding: bytes[range(of: field)], as: UTF8.self)
    }

    package mutating func reset(line: Int) {
        bytes.removeAll(keepingCapacity: true)
        bounds.removeAll(keepingCapacity: true)
        self.line = line
    }

    /// Appends fields whose bounds are `pairs` (start, end, start, end, ...).
    mutating func appendFields(_ pairs: UnsafeBufferPointer<Int>) {
        bounds.append(contentsOf: pairs)
    }

    /// Appends the row's bytes as read (its fields' bounds count from its first byte).
    mutating func appendBytes(_ row: UnsafeBufferPointer<UInt8>) {
        bytes.append(contentsOf: row)
    }

    /// Turns each doubled quote of field `field` into one, moving the rest of the field left.
    mutating func unescapeQuotes(of field: Int) {
        let quote = UInt8(ascii: "\"")
        var read = bounds[2 * field], write = bounds[2 * field]
        let end = bounds[2 * field + 1]
        while read < end {
            bytes[write] = bytes[read]
            read += bytes[read] == quote ? 2 : 1
            write += 1
        }
        bounds[2 * field + 1] = write
    }
}

/// Streams a CSV (RFC 4180) or TSV file: the first record is the header; quoted fields may hold
/// delimiters, doubled quotes and newlines; CRLF and a UTF-8 byte-order mark are accepted.
/// Memory stays at one read buffer (grown only for a row longer than it).
///
/// ```swift
/// var reader = try CSVReader(path: "data/sessions.csv", delimiter: UInt8(ascii: ","), displayPath: "data/sessions.csv")
/// var row = RawRow()
/// while try reader.nextRow(into: &row) { print(row.line, row.string(0)) }
/// ```
package struct CSVReader: FeedReader {
    private static let quote = UInt8(ascii: "\""), newline = UInt8(ascii: "\n"), carriageReturn = UInt8(ascii: "\r")

    private let source: any ByteSource
    private let delimiter: UInt8
    private let displayPath: String
    private var buffer: [UInt8]
    /// Where the next row starts in `buffer`, and how many bytes of it are valid.
    private var start = 0
    private var end = 0
    private var atEnd = false
    /// Why the bytes ended early (a truncated file, a corrupt or truncated compressed stream).
    private var failure: ByteSourceError?
    private var bytesRead: UInt64 = 0
    /// The bytes read before the buffer's first one, for the feed's fingerprint.
    private var recent = RecentBytes()
    /// The line `start` is on.
    private var line = 1
    package private(set) var header: [String] = []
    private var scratch = RawRow()

    /// `startingAt`: after reading the header, go on from a place an earlier reader of the
    /// same file gave as `nextRecord`.
    package init(path: String, delimiter: UInt8, displayPath: String, bufferSize: Int = 1 << 18,
                startingAt place: FeedOffset? = nil, compression: FeedCompression = .none,
                confinement: PathConfinement? = nil, remote: RemoteFeed? = nil, watch: FeedWatch? = nil) throws(FeedError) {
        source = try ByteSources.open(path: path, compression: compression, displayPath: displayPath, confinement: confinement,
                                      remote: remote, watch: watch)
        self.delimiter = delimiter
        self.displayPath = displayPath
        self.buffer = [UInt8](repeating: 0, count: bufferSize)
        fill()
        if end - start >= 3 && buffer[start] == 0xEF && buffer[start + 1] == 0xBB && buffer[start + 2] == 0xBF {
            start += 3   // a UTF-8 byte-order mark
        }
        var first = RawRow()
        guard try nextRow(into: &first, skippingBlank: false) else { return }
        header = (0..<first.count).map { first.string($0).trimmingCharacters(in: .whitespaces) }
        if let empty = header.firstIndex(of: "") {
            throw FeedError(file: displayPath, line: 1, message: "header field \(empty + 1) is empty")
        }
        var seen: Set<String> = []
        for name in header where !seen.insert(name).inserted {
            throw FeedError(file: displayPath, line: 1, message: "header names field '\(name)' twice")
        }
        if let place { try move(to: place) }
    }

    package var nextRecord: FeedOffset {
        FeedOffset(offset: Int64(bytesRead) - Int64(end - start), line: line)
    }

    package func hashOfBytes(beforeNextRecord count: Int) -> UInt64? {
        buffer.withUnsafeBufferPointer { buffer in
            recent.hash(of: count, endingAt: start, in: buffer, bufferOffset: Int64(bytesRead) - Int64(end))
        }
    }

    /// Goes on from `place`, which lies after the header: within the bytes buffered, or by
    /// skipping in the source (a file seeks; a compressed stream is decompressed up to it).
    private mutating func move(to place: FeedOffset) throws(FeedError) {
        let buffered = Int64(bytesRead) - Int64(end)
        guard place.offset >= nextRecord.offset else {
            throw FeedError(file: displayPath, line: place.line,
                            message: "cannot continue at byte \(place.offset): it lies before the first record")
        }
        if place.offset <= Int64(bytesRead) {
            start = Int(place.offset - buffered)
        } else {
            do {
                try source.skip(to: place.offset)
            } catch {
                throw FeedError(file: displayPath, line: place.line, message: error.message)
            }
            start = 0
            end = 0
            bytesRead = UInt64(place.offset)
            recent.forget()
            fill()
        }
        line = place.line
    }

    /// The next row as strings (the simple, slower form of `nextRow(into:)`).
    package mutating func next() throws(FeedError) -> FeedRecord? {
        var row = scratch
        defer { scratch = row }
        guard try nextRow(into: &row) else { return nil }
        return FeedRecord(line: row.line, fields: header, values: (0..<row.count).map { .text(row.string($0)) })
    }

    /// Reads the next row into `row`; false at the end of the file. Blank lines are skipped;
    /// a row with another number of fields than the header is an error.
    package mutating func nextRow(into row: inout RawRow) throws(FeedError) -> Bool {
        guard try nextRow(into: &row, skippingBlank: true) else { return false }
        guard row.count == header.count else {
            throw FeedError(file: displayPath, line: row.line,
                            message: "expected \(header.count) fields (as in the header), found \(row.count)")
        }
        return true
    }

    private mutating func nextRow(into row: inout RawRow, skippingBlank: Bool) throws(FeedError) -> Bool {
        while true {
            if start == end {
                if let failure { throw FeedError(file: displayPath, line: line, message: failure.message) }
                if atEnd { return false }
            }
            switch try parseRow(into: &row) {
            case .row(let next, let lines):
                start = next
                line += lines
                if skippingBlank && row.count == 1 && row.range(of: 0).isEmpty { continue }   // a blank line
                return true
            case .needMore:
                // The rows before a failure were read; the one it cut is not.
                if let failure { throw FeedError(file: displayPath, line: line, message: failure.message) }
                if atEnd { preconditionFailure("a row at the end of the file is always complete") }
                if end - start >= FeedLimits.maxRecordBytes { throw FeedLimits.recordTooLong(file: displayPath, line: line) }
                refill()
            }
        }
    }

    private enum Parse {
        /// The row ends before `next`, after `lines` line breaks.
        case row(next: Int, lines: Int)
        /// The row runs past the bytes read so far.
        case needMore
    }

    /// Parses one row starting at `start`, without consuming it. Fields are found first as
    /// places in the buffer, gathered on the stack and appended to the row together (an
    /// append per field was a tenth of the reader's instructions); the row's bytes are then
    /// copied in one piece (a copy per field was a tenth of a PostgreSQL import's client time).
    private func parseRow(into row: inout RawRow) throws(FeedError) -> Parse {
        row.reset(line: line)
        let delimiter = self.delimiter, end = self.end, atEnd = self.atEnd, rowStart = start
        var doubledQuotes: [Int] = []   // fields quoted with a doubled quote inside (rare: no allocation otherwise)
        let parse = try buffer.withUnsafeBufferPointer { (bytes) throws(FeedError) -> Parse in
            // Bounds of the fields not yet appended to the row, (start, end) pairs, on the stack.
            try withUnsafeTemporaryAllocation(of: Int.self, capacity: 64) { (pairs) throws(FeedError) -> Parse in
                var pendingCount = 0   // Ints in `pairs`
                var fields = 0         // fields found so far (the next one's index)
                var index = start
                var lines = 0
                while true {
                    // One field: its contents are bytes[fieldStart..<fieldEnd].
                    let fieldStart: Int, fieldEnd: Int
                    var quotePairs = 0   // doubled quotes in the field: its value is that much shorter
                    if index < end && bytes[index] == Self.quote {
                        index += 1
                        fieldStart = index
                        while true {
                            guard index < end else {
                                if atEnd {
                                    throw FeedError(file: displayPath, line: line, message: "unterminated quoted field (opened on this line)")
                                }
                                return .needMore
                            }
                            let byte = bytes[index]
                            if byte == Self.quote {
                                if index + 1 >= end && !atEnd { return .needMore }
                                if index + 1 < end && bytes[index + 1] == Self.quote {
                                    if doubledQuotes.last != fields { doubledQuotes.append(fields) }
                                    quotePairs += 1
                                    index += 2
                                    continue
                                }
                                fieldEnd = index
                                index += 1
                                if index < end, bytes[index] != delimiter, bytes[index] != Self.newline, bytes[index] != Self.carriageReturn {
                                    throw FeedError(file: displayPath, line: line + lines,
                                                    message: "unexpected text after a closing quote in field \(fields + 1)")
                                }
                                break
                            }
                            if byte == Self.newline { lines += 1 }
                            index += 1
                        }
                    } else {
                        fieldStart = index
                        while index < end {
                            let byte = bytes[index]
                            if byte == delimiter || byte == Self.newline || byte == Self.carriageReturn { break }
                            index += 1
                        }
                        if index == end && !atEnd { return .needMore }
                        fieldEnd = index
                    }
                    if fieldEnd - fieldStart - quotePairs > FeedLimits.maxFieldBytes {
                        throw FeedLimits.fieldTooLong("\(fields + 1)", file: displayPath, line: line)
                    }
                    if pendingCount == pairs.count {
                        row.appendFields(UnsafeBufferPointer(pairs))
                        pendingCount = 0
                    }
                    pairs[pendingCount] = fieldStart - rowStart
                    pairs[pendingCount + 1] = fieldEnd - rowStart
                    pendingCount += 2
                    fields += 1
                    // After the field: a delimiter, or the row's end (a line end or the end of the file).
                    if index < end && bytes[index] == delimiter {
                        index += 1
                        if index == end && !atEnd { return .needMore }
                        continue
                    }
                    row.appendFields(UnsafeBufferPointer(rebasing: pairs[..<pendingCount]))
                    row.appendBytes(UnsafeBufferPointer(rebasing: bytes[rowStart..<index]))
                    if index == end { return .row(next: index, lines: lines) }
                    if bytes[index] == Self.carriageReturn {
                        if index + 1 >= end && !atEnd { return .needMore }
                        if index + 1 < end && bytes[index + 1] == Self.newline { index += 1 }
                    }
                    return .row(next: index + 1, lines: lines + 1)
                }
            }
        }
        if case .row = parse {
            for field in doubledQuotes { row.unescapeQuotes(of: field) }
        }
        return parse
    }

    /// Keeps the unparsed bytes, moved to the front, and reads more after them; grows the
    /// buffer only when one row does not fit.
    private mutating func refill() {
        let remaining = end - start
        if start > 0 {
            buffer.withUnsafeMutableBufferPointer { bytes in
                guard let base = bytes.baseAddress else { return }
                recent.keep(UnsafeBufferPointer(rebasing: bytes[..<start]))
                base.update(from: base + start, count: remaining)
            }
            start = 0
            end = remaining
        }
        if end == buffer.count { buffer.append(contentsOf: [UInt8](repeating: 0, count: buffer.count)) }
        fill()
    }

    /// Reads into the free part of the buffer until it is full or the bytes end (a failure
    /// ends them too, kept in `failure` for the row being read to report).
    private mutating func fill() {
        while end < buffer.count && !atEnd && failure == nil {
            let source = self.source, from = end
            let count: Int
            do {
                count = try buffer.withUnsafeMutableBytes { (bytes) throws(ByteSourceError) -> Int in
                    try source.read(into: UnsafeMutableRawBufferPointer(rebasing: bytes[from...]))
                }
            } catch {
                failure = error as? ByteSourceError ?? ByteSourceError(message: "\(error)")
                break
            }
            if count == 0 {
                atEnd = true
                break
            }
            end += count
            bytesRead += UInt64(count)
        }
    }
}
