import BatchRunStore
import BatchRunFeeds
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
    /// `confinement`: the folders a queue worker lets the item write in (nil: anywhere);
    /// `budget`: a confined worker's item spends its `--max-bytes` on what it writes.
    /// A file whose name ends in `.gz` or `.zst` (after its format's suffix) is compressed.
    /// An `s3://BUCKET/KEY` output goes up to S3 (section 14), whole or not at all.
    package static func make(_ output: FetchStep.Output, columns: [String], confinement: PathConfinement? = nil,
                             network: NetworkRules? = nil, budget: ItemBudget? = nil) throws -> any OutputWriter {
        let sink = { (path: String) throws in try OutputSinks.open(path, confinement: confinement, network: network) }
        switch output {
        case .csv(let path): return try FileOutput(path: path, format: .csv, columns: columns, sink: sink(path), budget: budget)
        case .json(let path): return try FileOutput(path: path, format: .json, columns: columns, sink: sink(path), budget: budget)
        case .ndjson(let path): return try FileOutput(path: path, format: .ndjson, columns: columns, sink: sink(path), budget: budget)
        case .table: return TableOutput(columns: columns, budget: budget)
        }
    }
}

/// CSV (RFC 4180, with a header), a JSON array of objects, or NDJSON, gzip- or zstd-compressed
/// when its name ends in `.gz` or `.zst`. A local file is made and moved into place relative to
/// its folder's descriptor (`ConfinedFolder`), opened once; an `s3://` one is uploaded.
struct FileOutput: OutputWriter {
    package enum Format { case csv, json, ndjson }

    package let path: String
    package let format: Format
    package let columns: [String]
    let sink: any OutputSink
    let compressor: StreamCompressor?
    package var buffer = ""
    package var rows = 0
    let budget: ItemBudget?

    /// `sink`: where the bytes go (`OutputSinks.open(path, ...)`).
    package init(path: String, format: Format, columns: [String], sink: any OutputSink, budget: ItemBudget? = nil) throws {
        self.path = path
        self.budget = budget
        self.format = format
        self.columns = columns
        self.sink = sink
        compressor = try StreamCompressor(FeedCompression(path: path))
        switch format {
        case .csv: buffer = columns.map(Self.csvField).joined(separator: ",") + "\n"
        case .json: buffer = "["
        case .ndjson: break
        }
    }

    package mutating func write(_ values: [StoreValue]) throws {
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

    package mutating func finish() throws {
        if format == .json { buffer += rows == 0 ? "]\n" : "\n]\n" }
        try flush()
        if let compressor { try sink.write(compressor.finish()) }
        try sink.finish()
    }

    package mutating func abandon() {
        sink.abandon()
    }

    private mutating func flush() throws {
        let bytes = Data(buffer.utf8)
        try budget?.spend(bytes: bytes.count)
        try sink.write(compressor.map { try $0.compress(bytes) } ?? bytes)
        buffer = ""
    }

    /// A row as a JSON object on one line: `{"id": 1, "name": "Ann"}`.
    private func object(_ values: [StoreValue]) -> String {
        var json = JSONText()
        json.raw("{")
        for (index, (column, value)) in zip(columns, values).enumerated() {
            if index > 0 { json.raw(", ") }
            json.string(column)
            json.raw(": ")
            json.value(value)
        }
        json.raw("}")
        return json.text
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
    package let columns: [String]
    package var rows: [[String]] = []
    var budget: ItemBudget?

    package mutating func write(_ values: [StoreValue]) throws {
        let cells = values.map { $0 == .null ? "NULL" : $0.description }
        try budget?.spend(bytes: cells.reduce(cells.count) { $0 + $1.utf8.count })
        rows.append(cells)
    }

    package mutating func finish() throws {
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

    package mutating func abandon() {}
}
