import Foundation

/// Writes a fetch's rows to a file or standard output. Files are written beside their final
/// name and moved into place only when complete, so a failed or cancelled fetch leaves the
/// previous file untouched.
protocol OutputWriter {
    mutating func write(_ values: [StoreValue]) throws
    mutating func finish() throws
    mutating func abandon()
}

enum OutputWriters {
    static func make(_ output: FetchStep.Output, columns: [String]) throws -> any OutputWriter {
        switch output {
        case .csv(let path): return try FileOutput(path: path, format: .csv, columns: columns)
        case .json(let path): return try FileOutput(path: path, format: .json, columns: columns)
        case .ndjson(let path): return try FileOutput(path: path, format: .ndjson, columns: columns)
        case .table: return TableOutput(columns: columns)
        }
    }
}

/// CSV (RFC 4180, with a header), a JSON array of objects, or NDJSON.
struct FileOutput: OutputWriter {
    enum Format { case csv, json, ndjson }

    let path: String
    let temporaryPath: String
    let format: Format
    let columns: [String]
    let handle: FileHandle
    var buffer = ""
    var rows = 0

    init(path: String, format: Format, columns: [String]) throws {
        self.path = path
        self.format = format
        self.columns = columns
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        temporaryPath = path + ".partial-\(ProcessInfo.processInfo.processIdentifier)"
        guard FileManager.default.createFile(atPath: temporaryPath, contents: nil),
              let handle = FileHandle(forWritingAtPath: temporaryPath) else {
            throw FileAccessError(.write, path: path, errno: errno)
        }
        self.handle = handle
        switch format {
        case .csv: buffer = columns.map(Self.csvField).joined(separator: ",") + "\n"
        case .json: buffer = "["
        case .ndjson: break
        }
    }

    mutating func write(_ values: [StoreValue]) throws {
        switch format {
        case .csv:
            buffer += values.map { $0 == .null ? "" : Self.csvField($0.description) }.joined(separator: ",") + "\n"
        case .json:
            buffer += (rows == 0 ? "\n  " : ",\n  ") + object(values)
        case .ndjson:
            buffer += object(values) + "\n"
        }
        rows += 1
        if buffer.utf8.count > 1 << 16 { try flush() }
    }

    mutating func finish() throws {
        if format == .json { buffer += rows == 0 ? "]\n" : "\n]\n" }
        try flush()
        try handle.close()
        if FileManager.default.fileExists(atPath: path) { try FileManager.default.removeItem(atPath: path) }
        try FileManager.default.moveItem(atPath: temporaryPath, toPath: path)
    }

    mutating func abandon() {
        try? handle.close()
        try? FileManager.default.removeItem(atPath: temporaryPath)
    }

    private mutating func flush() throws {
        try handle.write(contentsOf: Data(buffer.utf8))
        buffer = ""
    }

    private func object(_ values: [StoreValue]) -> String {
        "{" + zip(columns, values).map { "\(JSONText.string($0)): \(JSONText.value($1))" }.joined(separator: ", ") + "}"
    }

    static func csvField(_ text: String) -> String {
        if text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) {
            return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        }
        return text
    }
}

/// An aligned text table on standard output (`output: -`).
struct TableOutput: OutputWriter {
    let columns: [String]
    var rows: [[String]] = []

    mutating func write(_ values: [StoreValue]) throws {
        rows.append(values.map { $0 == .null ? "NULL" : $0.description })
    }

    mutating func finish() throws {
        var widths = columns.map(\.count)
        for row in rows {
            for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) }
        }
        func line(_ cells: [String]) -> String {
            zip(cells, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  ")
                .trimmingCharacters(in: .whitespaces)
        }
        var text = line(columns) + "\n" + widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ") + "\n"
        for row in rows { text += line(row) + "\n" }
        text += "(\(rows.count) row\(rows.count == 1 ? "" : "s"))\n"
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    mutating func abandon() {}
}

/// JSON text for report and output values.
enum JSONText {
    static func string(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            default:
                if scalar.value < 0x20 {
                    result += String(format: "\\u%04x", scalar.value)
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result + "\""
    }

    static func value(_ value: StoreValue) -> String {
        switch value {
        case .null: return "null"
        case .integer(let int): return String(int)
        case .real(let double): return double.isFinite ? "\(double)" : "null"
        case .text(let text): return string(text)
        case .blob(let bytes): return string(Data(bytes).base64EncodedString())
        }
    }
}
