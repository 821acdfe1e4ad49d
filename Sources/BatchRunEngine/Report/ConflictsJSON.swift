import BatchRunStore

/// The JSON report's `conflicts` array written directly as UTF-8, in the layout `JSONEncoder`
/// gives it (pretty-printed, keys sorted), and handed on in chunks: a run with 200,000
/// conflicts spent three quarters of its time in `JSONEncoder` for them, and a report held
/// whole in memory (116 MB for those) was copied once more on its way to the file.
package struct ConflictsJSON: ~Copyable {
    /// The bytes of the piece being written: `storage[0..<count]`. Written through a pointer,
    /// room for a whole record made first: growing an array for each of a record's forty or so
    /// parts was most of the time the report took (0.19 s of a 200,000-conflict run).
    private var storage: UnsafeMutableRawBufferPointer
    private var count = 0

    /// How much a piece holds before it is handed on.
    private static let pieceSize = 1 << 20

    private init(capacity: Int) {
        storage = .allocate(byteCount: capacity, alignment: 1)
    }

    deinit {
        storage.deallocate()
    }

    /// `records` as the elements of the report's top-level `conflicts` array (indented for it),
    /// given to `write` a megabyte or so at a time. Written from the records' compact entries:
    /// each name is escaped once, each value straight from its cell.
    package static func write(_ records: ConflictRecords, to write: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        var json = ConflictsJSON(capacity: pieceSize + 64 << 10)
        let names = records.names.map(Self.encoded)
        for index in records.indices {
            let room = room(for: records.entries[index], of: records, names: names)
            if json.count + room > json.storage.count {
                if json.count > 0 { try json.handOn(to: write) }
                if room > json.storage.count {
                    json.storage.deallocate()
                    json.storage = .allocate(byteCount: room, alignment: 1)
                }
            }
            let start = json.count
            json.append(records.entries[index], of: records, names: names, first: index == 0)
            assert(json.count - start <= room, "room(for:) is short by \(json.count - start - room) bytes")
            if json.count >= pieceSize { try json.handOn(to: write) }
        }
        if json.count > 0 { try json.handOn(to: write) }
    }

    private mutating func handOn(to write: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        try write(UnsafeRawBufferPointer(rebasing: storage[0..<count]))
        count = 0
    }

    /// A name as a JSON string, quotes included.
    private static func encoded(_ name: String) -> [UInt8] {
        var json = ConflictsJSON(capacity: 6 * name.utf8.count + 2)
        var name = name
        name.withUTF8 { json.string(UnsafeRawBufferPointer($0)) }
        return Array(UnsafeRawBufferPointer(rebasing: json.storage[0..<json.count]))
    }

    /// At least the bytes an entry takes: its fixed text, its names, and each text value as if
    /// every byte were escaped as `\u00XX`.
    private static func room(for entry: ConflictRecords.Entry, of records: ConflictRecords, names: [[UInt8]]) -> Int {
        func value(_ cell: ConflictRecords.Value) -> Int {
            cell.kind == .text ? 6 * Int(cell.length) + 2 : 32   // an integer's 20 characters, a Double's shortest form, null
        }
        var room = 512 + names[Int(entry.changedBy)].count + names[Int(entry.entity)].count + names[Int(entry.job)].count
        for index in entry.keys {
            let key = records.keyValues[Int(index)]
            room += 16 + names[Int(key.name)].count + value(key.value)
        }
        for index in entry.properties {
            let property = records.propertyValues[Int(index)]
            room += 160 + names[Int(property.name)].count + value(property.original) + value(property.ours)
                + value(property.resolved) + value(property.store)
        }
        return room
    }

    private mutating func append(_ entry: ConflictRecords.Entry, of records: ConflictRecords, names: [[UInt8]], first: Bool) {
        records.bytes.withUnsafeBytes { text in
            func value(_ cell: ConflictRecords.Value) {
                switch cell.kind {
                case .null: raw("null")
                case .integer: integer(cell.number)
                case .real: real(Double(bitPattern: UInt64(bitPattern: cell.number)))
                case .text: string(UnsafeRawBufferPointer(rebasing: text[Int(cell.number)..<(Int(cell.number) + Int(cell.length))]))
                }
            }
            raw(first ? "    {\n" : ",\n    {\n")
            raw("      \"changed_by\" : "); bytes(names[Int(entry.changedBy)])
            raw(",\n      \"entity\" : "); bytes(names[Int(entry.entity)])
            raw(",\n      \"job\" : "); bytes(names[Int(entry.job)])
            raw(",\n      \"key\" : {\n")
            // Keys sorted by name, as JSONEncoder sorts them.
            let keys = entry.keys.count == 1 ? [entry.keys.lowerBound]
                : entry.keys.sorted { records.names[Int(records.keyValues[Int($0)].name)] < records.names[Int(records.keyValues[Int($1)].name)] }
            for (offset, index) in keys.enumerated() {
                let key = records.keyValues[Int(index)]
                raw(offset > 0 ? ",\n        " : "        "); bytes(names[Int(key.name)]); raw(" : "); value(key.value)
            }
            raw("\n      },\n      \"kind\" : \""); ascii(entry.kind.rawValue)
            raw("\",\n      \"outcome\" : \""); ascii(entry.outcome.rawValue)
            raw("\",\n      \"policy\" : \""); ascii(entry.policy.rawValue)
            raw("\",\n      \"properties\" : [")
            for index in entry.properties {
                let property = records.propertyValues[Int(index)]
                raw(index > entry.properties.lowerBound ? ",\n        {\n" : "\n        {\n")
                raw("          \"name\" : "); bytes(names[Int(property.name)])
                raw(",\n          \"original\" : "); value(property.original)
                raw(",\n          \"ours\" : "); value(property.ours)
                raw(",\n          \"resolved\" : "); value(property.resolved)
                raw(",\n          \"store\" : "); value(property.store)
                raw("\n        }")
            }
            raw(entry.properties.isEmpty ? "\n\n      ]\n    }" : "\n      ]\n    }")
        }
    }

    /// An enum's raw value, plain ASCII with nothing to escape.
    private mutating func ascii(_ text: String) {
        var text = text
        text.withUTF8 { bytes(UnsafeRawBufferPointer($0)) }
    }

    private mutating func bytes(_ source: [UInt8]) {
        source.withUnsafeBytes { bytes($0) }
    }

    private mutating func raw(_ text: StaticString) {
        bytes(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Appends bytes; `room(for:)` made sure they fit.
    private mutating func bytes(_ source: UnsafeRawBufferPointer) {
        UnsafeMutableRawBufferPointer(rebasing: storage[count...]).copyMemory(from: source)
        count += source.count
    }

    private mutating func byte(_ value: UInt8) {
        storage[count] = value
        count += 1
    }

    /// A Double as JSONEncoder writes it: shortest form, no ".0" on a whole number; null when not finite.
    private mutating func real(_ double: Double) {
        guard double.isFinite else { return raw("null") }
        var text = String(double)
        if text.hasSuffix(".0") { text.removeLast(2) }
        text.withUTF8 { bytes(UnsafeRawBufferPointer($0)) }
    }

    /// An integer's decimal digits, without making a string of them.
    private mutating func integer(_ value: Int64) {
        if value < 0 { byte(0x2D) }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)   // up to 20 digits, least significant first
        var length = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[length] = UInt8(truncatingIfNeeded: magnitude % 10) + 0x30
                magnitude /= 10
                length += 1
            } while magnitude > 0
            for index in stride(from: length - 1, through: 0, by: -1) { byte(buffer[index]) }
        }
    }

    /// A JSON string: quotes, backslashes and control characters escaped; slashes as they are.
    /// Only ASCII bytes are escaped, so UTF-8 sequences pass through whole.
    private mutating func string(_ utf8: UnsafeRawBufferPointer) {
        byte(0x22)
        guard utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) else {
            bytes(utf8)
            byte(0x22)
            return
        }
        for character in utf8 {
            switch character {
            case 0x22: raw("\\\"")
            case 0x5C: raw("\\\\")
            case 0x0A: raw("\\n")
            case 0x0D: raw("\\r")
            case 0x09: raw("\\t")
            case 0x08: raw("\\b")
            case 0x0C: raw("\\f")
            case ..<0x20:
                let hex = Array(String(character, radix: 16).utf8)
                raw("\\u00")
                if hex.count == 1 { byte(0x30) }
                for digit in hex { byte(digit) }
            default: byte(character)
            }
        }
        byte(0x22)
    }
}
