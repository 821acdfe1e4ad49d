/// Streams a CSV (RFC 4180) or TSV file: the first record is the header; quoted fields may hold
/// delimiters, doubled quotes and newlines; CRLF and a UTF-8 byte-order mark are accepted.
///
/// ```swift
/// var reader = try CSVReader(path: "data/sessions.csv", delimiter: UInt8(ascii: ","), displayPath: "data/sessions.csv")
/// while let record = try reader.next() { print(record.line, record.values) }
/// ```
public struct CSVReader: FeedReader {
    private var stream: ByteStream
    private let delimiter: UInt8
    private let displayPath: String
    private var line = 1
    public private(set) var header: [String] = []
    private var field: [UInt8] = []

    public init(path: String, delimiter: UInt8, displayPath: String) throws(FeedError) {
        do {
            stream = try ByteStream(path: path)
        } catch {
            throw FeedError(file: displayPath, line: 0, message: "cannot open the feed file")
        }
        self.delimiter = delimiter
        self.displayPath = displayPath
        if stream.peek() == 0xEF {
            // Skip a UTF-8 byte-order mark (EF BB BF).
            _ = stream.next()
            if stream.next() != 0xBB || stream.next() != 0xBF {
                throw FeedError(file: displayPath, line: 1, message: "the file starts with a broken byte-order mark")
            }
        }
        guard let first = try readRecord() else { return }
        header = first.fields.map { $0.trimmingCharacters(in: .whitespaces) }
        if let empty = header.firstIndex(of: "") {
            throw FeedError(file: displayPath, line: 1, message: "header field \(empty + 1) is empty")
        }
        var seen: Set<String> = []
        for name in header where !seen.insert(name).inserted {
            throw FeedError(file: displayPath, line: 1, message: "header names field '\(name)' twice")
        }
    }

    public mutating func next() throws(FeedError) -> FeedRecord? {
        while let record = try readRecord() {
            if record.fields.count == 1 && record.fields[0].isEmpty { continue }   // a blank line
            guard record.fields.count == header.count else {
                throw FeedError(file: displayPath, line: record.line,
                                message: "expected \(header.count) fields (as in the header), found \(record.fields.count)")
            }
            return FeedRecord(line: record.line, fields: header, values: record.fields.map(ParamValue.text))
        }
        return nil
    }

    private mutating func readRecord() throws(FeedError) -> (line: Int, fields: [String])? {
        let startLine = line
        guard stream.peek() != nil else { return nil }
        var fields: [String] = []
        field.removeAll(keepingCapacity: true)
        var quoted = false
        var fieldStart = true
        while true {
            guard let byte = stream.next() else {
                if quoted { throw FeedError(file: displayPath, line: startLine, message: "unterminated quoted field (opened on this line)") }
                fields.append(String(decoding: field, as: UTF8.self))
                return (startLine, fields)
            }
            if quoted {
                if byte == UInt8(ascii: "\"") {
                    if stream.peek() == UInt8(ascii: "\"") {
                        _ = stream.next()
                        field.append(byte)
                    } else {
                        quoted = false
                        let after = stream.peek()
                        if after != nil && after != delimiter && after != UInt8(ascii: "\n") && after != UInt8(ascii: "\r") {
                            throw FeedError(file: displayPath, line: line,
                                            message: "unexpected text after a closing quote in field \(fields.count + 1)")
                        }
                    }
                } else {
                    if byte == UInt8(ascii: "\n") { line += 1 }
                    field.append(byte)
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\"") where fieldStart:
                quoted = true
                fieldStart = false
            case delimiter:
                fields.append(String(decoding: field, as: UTF8.self))
                field.removeAll(keepingCapacity: true)
                fieldStart = true
            case UInt8(ascii: "\r") where stream.peek() == UInt8(ascii: "\n"):
                break
            case UInt8(ascii: "\n"):
                line += 1
                fields.append(String(decoding: field, as: UTF8.self))
                return (startLine, fields)
            default:
                field.append(byte)
                fieldStart = false
            }
        }
    }
}
