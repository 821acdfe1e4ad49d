import BatchRunStore

/// The JSON report's `conflicts` array written directly as UTF-8 (through `JSONText`), in the
/// layout `JSONEncoder` gives it (pretty-printed, keys sorted), and handed on in chunks: a run
/// with 200,000 conflicts spent three quarters of its time in `JSONEncoder` for them, and a
/// report held whole in memory (116 MB for those) was copied once more on its way to the file.
enum ConflictsJSON {
    /// How much a piece holds before it is handed on.
    private static let pieceSize = 1 << 20

    /// `records` as the elements of the report's top-level `conflicts` array (indented for it),
    /// given to `write` a megabyte or so at a time. Written from the records' compact entries:
    /// each name is escaped once, each value straight from its cell.
    package static func write(_ records: ConflictRecords, to write: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        var json = JSONText(capacity: pieceSize + 64 << 10)
        let names = records.names.map(Self.encoded)
        for index in records.indices {
            append(records.entries[index], of: records, names: names, first: index == 0, to: &json)
            if json.count >= pieceSize {
                try json.withBytes(write)
                json.removeAll()
            }
        }
        if json.count > 0 { try json.withBytes(write) }
    }

    /// A name as a JSON string, quotes included.
    private static func encoded(_ name: String) -> [UInt8] {
        var json = JSONText()
        json.string(name)
        return json.withBytes { Array($0) }
    }

    private static func append(_ entry: ConflictRecords.Entry, of records: ConflictRecords, names: [[UInt8]], first: Bool,
                               to json: inout JSONText) {
        records.bytes.withUnsafeBytes { text in
            func name(_ index: Int32) {
                names[Int(index)].withUnsafeBytes { json.raw($0) }
            }
            func value(_ cell: ConflictRecords.Value) {
                switch cell.kind {
                case .null: json.raw("null")
                case .integer: json.integer(cell.number)
                case .real: json.real(Double(bitPattern: UInt64(bitPattern: cell.number)), dropsPointZero: true)
                case .text: json.string(UnsafeRawBufferPointer(rebasing: text[Int(cell.number)..<(Int(cell.number) + Int(cell.length))]))
                }
            }
            json.raw(first ? "    {\n" : ",\n    {\n")
            json.raw("      \"changed_by\" : "); name(entry.changedBy)
            json.raw(",\n      \"entity\" : "); name(entry.entity)
            json.raw(",\n      \"job\" : "); name(entry.job)
            json.raw(",\n      \"key\" : {\n")
            // Keys sorted by name, as JSONEncoder sorts them.
            let keys = entry.keys.count == 1 ? [entry.keys.lowerBound]
                : entry.keys.sorted { records.names[Int(records.keyValues[Int($0)].name)] < records.names[Int(records.keyValues[Int($1)].name)] }
            for (offset, index) in keys.enumerated() {
                let key = records.keyValues[Int(index)]
                json.raw(offset > 0 ? ",\n        " : "        "); name(key.name); json.raw(" : "); value(key.value)
            }
            json.raw("\n      },\n      \"kind\" : "); json.string(entry.kind.rawValue)
            json.raw(",\n      \"outcome\" : "); json.string(entry.outcome.rawValue)
            json.raw(",\n      \"policy\" : "); json.string(entry.policy.rawValue)
            json.raw(",\n      \"properties\" : [")
            for index in entry.properties {
                let property = records.propertyValues[Int(index)]
                json.raw(index > entry.properties.lowerBound ? ",\n        {\n" : "\n        {\n")
                json.raw("          \"name\" : "); name(property.name)
                json.raw(",\n          \"original\" : "); value(property.original)
                json.raw(",\n          \"ours\" : "); value(property.ours)
                json.raw(",\n          \"resolved\" : "); value(property.resolved)
                json.raw(",\n          \"store\" : "); value(property.store)
                json.raw("\n        }")
            }
            json.raw(entry.properties.isEmpty ? "\n\n      ]\n    }" : "\n      ]\n    }")
        }
    }
}
