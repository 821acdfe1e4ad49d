import Foundation

/// Streams an NDJSON / JSONL file: one JSON object a line.
public struct NDJSONReader: FeedReader {
    private var stream: ByteStream
    private let displayPath: String
    private var line = 0
    private var bytes: [UInt8] = []

    public init(path: String, displayPath: String) throws(FeedError) {
        do {
            stream = try ByteStream(path: path)
        } catch {
            throw FeedError(file: displayPath, line: 0, message: "cannot open the feed file")
        }
        self.displayPath = displayPath
    }

    public mutating func next() throws(FeedError) -> FeedRecord? {
        while true {
            bytes.removeAll(keepingCapacity: true)
            var sawByte = false
            while let byte = stream.next() {
                sawByte = true
                if byte == UInt8(ascii: "\n") { break }
                bytes.append(byte)
            }
            guard sawByte else { return nil }
            line += 1
            if bytes.allSatisfy({ $0 == 32 || $0 == 9 || $0 == 13 }) { continue }
            return try JSONRecord.make(from: Data(bytes), line: line, file: displayPath)
        }
    }
}

/// Reads a JSON array of objects.
///
/// The file is parsed whole with `JSONSerialization` for now; records are then handed out one
/// at a time. The line of each record is the line its opening brace is on.
public struct JSONArrayReader: FeedReader {
    private var objects: [Any] = []
    private var lines: [Int] = []
    private var index = 0
    private let displayPath: String

    public init(path: String, displayPath: String) throws(FeedError) {
        self.displayPath = displayPath
        guard let data = FileManager.default.contents(atPath: path) else {
            throw FeedError(file: displayPath, line: 0, message: "cannot open the feed file")
        }
        let parsed: Any
        do {
            parsed = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            throw FeedError(file: displayPath, line: 1, message: "not valid JSON: \(error.localizedDescription)")
        }
        guard let array = parsed as? [Any] else {
            throw FeedError(file: displayPath, line: 1, message: "expected a JSON array of objects")
        }
        objects = array
        lines = Self.objectLines(in: data)
    }

    public mutating func next() throws(FeedError) -> FeedRecord? {
        guard index < objects.count else { return nil }
        defer { index += 1 }
        let line = index < lines.count ? lines[index] : 1
        return try JSONRecord.make(from: objects[index], line: line, file: displayPath)
    }

    /// The line of each top-level element's first byte.
    static func objectLines(in data: Data) -> [Int] {
        var result: [Int] = []
        var line = 1, depth = 0, inString = false, escaped = false
        for byte in data {
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                if byte == UInt8(ascii: "\n") { line += 1 }
                continue
            }
            switch byte {
            case UInt8(ascii: "\n"): line += 1
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                if depth == 1 { result.append(line) }
                depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1
            default: break
            }
        }
        return result
    }
}

/// Turns one parsed JSON object into a feed record.
enum JSONRecord {
    static func make(from data: Data, line: Int, file: String) throws(FeedError) -> FeedRecord {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            throw FeedError(file: file, line: line, message: "not valid JSON")
        }
        return try make(from: object, line: line, file: file)
    }

    static func make(from object: Any, line: Int, file: String) throws(FeedError) -> FeedRecord {
        guard let dictionary = object as? [String: Any] else {
            throw FeedError(file: file, line: line, message: "expected a JSON object")
        }
        var fields: [String] = []
        var values: [ParamValue] = []
        for key in dictionary.keys.sorted() {
            fields.append(key)
            guard let value = value(dictionary[key]!) else {
                throw FeedError(file: file, line: line, message: "field \(key): nested objects and arrays are not column values")
            }
            values.append(value)
        }
        return FeedRecord(line: line, fields: fields, values: values)
    }

    static func value(_ any: Any) -> ParamValue? {
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
