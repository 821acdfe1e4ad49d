import BatchRunStore
import Foundation

/// Streams an NDJSON / JSONL file: one JSON object a line.
package struct NDJSONReader: FeedReader {
    private var stream: ByteStream
    private let displayPath: String
    private var line = 0
    private var bytes: [UInt8] = []

    package init(path: String, displayPath: String, startingAt start: FeedOffset? = nil,
                 compression: FeedCompression = .none, confinement: PathConfinement? = nil,
                 remote: RemoteFeed? = nil, watch: FeedWatch? = nil) throws(FeedError) {
        stream = try ByteStream(feed: path, displayPath: displayPath, compression: compression, startingAt: start?.offset ?? 0,
                                confinement: confinement, remote: remote, watch: watch)
        self.displayPath = displayPath
        line = (start?.line ?? 1) - 1
    }

    package var nextRecord: FeedOffset { FeedOffset(offset: stream.offset, line: line + 1) }
    package func hashOfBytes(beforeNextRecord count: Int) -> UInt64? { stream.hashOfBytes(beforeOffset: count) }

    package mutating func next() throws(FeedError) -> FeedRecord? {
        while true {
            bytes.removeAll(keepingCapacity: true)
            var sawByte = false
            while let byte = stream.next() {
                sawByte = true
                if byte == UInt8(ascii: "\n") { break }
                if bytes.count == FeedLimits.maxRecordBytes { throw FeedLimits.recordTooLong(file: displayPath, line: line + 1) }
                bytes.append(byte)
            }
            if let failure = stream.failure { throw FeedError(file: displayPath, line: line + 1, message: failure.message) }
            guard sawByte else { return nil }
            line += 1
            if bytes.allSatisfy({ $0 == 32 || $0 == 9 || $0 == 13 }) { continue }
            return try JSONRecord.make(from: Data(bytes), line: line, file: displayPath)
        }
    }
}

/// Streams a JSON array of objects: the file is read in chunks, each top-level element's bytes
/// are found by tracking nesting, strings and escapes, and each element is parsed on its own,
/// so memory holds one element at a time however large the file. A record's line is the line
/// its opening brace is on.
package struct JSONArrayReader: FeedReader {
    private var stream: ByteStream
    private let displayPath: String
    private var line = 1
    private var started = false
    private var finished = false
    private var element: [UInt8] = []

    /// `startingAt` must be a place this reader gave as `nextRecord` (after an element).
    package init(path: String, displayPath: String, startingAt start: FeedOffset? = nil,
                 compression: FeedCompression = .none, confinement: PathConfinement? = nil,
                 remote: RemoteFeed? = nil, watch: FeedWatch? = nil) throws(FeedError) {
        stream = try ByteStream(feed: path, displayPath: displayPath, compression: compression, startingAt: start?.offset ?? 0,
                                confinement: confinement, remote: remote, watch: watch)
        self.displayPath = displayPath
        if let start, start.offset > 0 {
            line = start.line
            started = true
        }
    }

    package var nextRecord: FeedOffset { FeedOffset(offset: stream.offset, line: line) }
    package func hashOfBytes(beforeNextRecord count: Int) -> UInt64? { stream.hashOfBytes(beforeOffset: count) }

    package mutating func next() throws(FeedError) -> FeedRecord? {
        if finished { return nil }
        if !started {
            skipSpace()
            if stream.peek() == 0xEF { _ = stream.next(); _ = stream.next(); _ = stream.next(); skipSpace() }   // a byte-order mark
            guard let first = stream.next() else {
                // Bytes that stopped at once (a cancel, a stream that is not gzip) are not an empty file.
                if stream.failure != nil { throw error("") }
                finished = true
                return nil   // an empty file: no records
            }
            guard first == UInt8(ascii: "[") else { throw error("expected a JSON array of objects, found '\(Character(UnicodeScalar(first)))'") }
            started = true
            skipSpace()
            if stream.peek() == UInt8(ascii: "]") {
                _ = stream.next()
                return try end()
            }
        } else {
            skipSpace()
            switch stream.next() {
            case UInt8(ascii: ",")?: skipSpace()
            case UInt8(ascii: "]")?: return try end()
            case nil: throw error("the JSON array is not closed (the file ends inside it)")
            case let byte?: throw error("expected ',' or ']' between array elements, found '\(Character(UnicodeScalar(byte)))'")
            }
        }
        let recordLine = line
        try readElement()
        if stream.failure != nil { throw error("") }
        return try JSONRecord.make(from: Data(element), line: recordLine, file: displayPath)
    }

    /// After the closing bracket only white space may follow.
    private mutating func end() throws(FeedError) -> FeedRecord? {
        finished = true
        skipSpace()
        if stream.peek() != nil { throw error("unexpected text after the JSON array") }
        if stream.failure != nil { throw error("") }
        return nil
    }

    /// Reads one element's bytes into `element`: an object, array, string or scalar.
    private mutating func readElement() throws(FeedError) {
        element.removeAll(keepingCapacity: true)
        let recordLine = line
        var depth = 0, inString = false, escaped = false
        while let byte = stream.peek() {
            if element.count == FeedLimits.maxRecordBytes { throw FeedLimits.recordTooLong(file: displayPath, line: recordLine) }
            if inString {
                _ = stream.next()
                element.append(byte)
                if byte == UInt8(ascii: "\n") { line += 1 }
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                if !inString && depth == 0 { return }
                continue
            }
            switch byte {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if depth == 0 { return }   // the array's own closing bracket ends a scalar element
                depth -= 1
            case UInt8(ascii: ","):
                if depth == 0 { return }
            case UInt8(ascii: "\""):
                inString = true
            case UInt8(ascii: "\n"):
                line += 1
            default:
                break
            }
            _ = stream.next()
            element.append(byte)
            if depth == 0 && (byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]")) { return }
        }
        throw error("the JSON array is not closed (the file ends inside an element)")
    }

    private mutating func skipSpace() {
        while let byte = stream.peek(), byte == 32 || byte == 9 || byte == 10 || byte == 13 {
            if byte == 10 { line += 1 }
            _ = stream.next()
        }
    }

    private func error(_ message: String) -> FeedError {
        if let failure = stream.failure { return FeedError(file: displayPath, line: line, message: failure.message) }
        return FeedError(file: displayPath, line: line, message: message)
    }
}

/// Turns one parsed JSON object into a feed record.
enum JSONRecord {
    package static func make(from data: Data, line: Int, file: String) throws(FeedError) -> FeedRecord {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            throw FeedError(file: file, line: line, message: "not valid JSON")
        }
        return try make(from: object, line: line, file: file)
    }

    package static func make(from object: Any, line: Int, file: String) throws(FeedError) -> FeedRecord {
        guard let dictionary = object as? [String: Any] else {
            throw FeedError(file: file, line: line, message: "expected a JSON object")
        }
        var fields: [String] = []
        var values: [StoreValue] = []
        for key in dictionary.keys.sorted() {
            fields.append(key)
            guard let value = value(dictionary[key]!) else {
                throw FeedError(file: file, line: line, message: "field \(key): nested objects and arrays are not column values")
            }
            if case .text(let text) = value, text.utf8.count > FeedLimits.maxFieldBytes {
                throw FeedLimits.fieldTooLong(key, file: file, line: line)
            }
            values.append(value)
        }
        return FeedRecord(line: line, fields: fields, values: values)
    }

    package static func value(_ any: Any) -> StoreValue? {
        switch any {
        case is NSNull: return .null
        case let string as String: return .text(string)
        case let number as NSNumber:
            if String(cString: number.objCType) == "c" { return .integer(number.boolValue ? 1 : 0) }
            if let int = Int64(exactly: number.doubleValue), !"\(number)".contains(".") && !"\(number)".contains("e") {
                return .integer(int)
            }
            return .real(number.doubleValue)
        default: return nil
        }
    }
}
