/// The JSON report's `conflicts` array written directly as UTF-8, in the layout `JSONEncoder`
/// gives it (pretty-printed, keys sorted), and handed on in chunks: a run with 200,000
/// conflicts spent three quarters of its time in `JSONEncoder` for them, and a report held
/// whole in memory (116 MB for those) was copied once more on its way to the file.
struct ConflictsJSON: ~Copyable {
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
    /// given to `write` a megabyte or so at a time.
    static func write(_ records: [MergeConflictRecord], to write: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        var json = ConflictsJSON(capacity: pieceSize + 64 << 10)
        for (index, record) in records.enumerated() {
            let room = room(for: record)
            if json.count + room > json.storage.count {
                if json.count > 0 { try json.handOn(to: write) }
                if room > json.storage.count {
                    json.storage.deallocate()
                    json.storage = .allocate(byteCount: room, alignment: 1)
                }
            }
            let start = json.count
            json.append(record, first: index == 0)
            assert(json.count - start <= room, "room(for:) is short by \(json.count - start - room) bytes")
            if json.count >= pieceSize { try json.handOn(to: write) }
        }
        if json.count > 0 { try json.handOn(to: write) }
    }

    private mutating func handOn(to write: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        try write(UnsafeRawBufferPointer(rebasing: storage[0..<count]))
        count = 0
    }

    /// At least the bytes `record` takes: its fixed text, and each string as if every byte were
    /// escaped as `\u00XX`.
    private static func room(for record: MergeConflictRecord) -> Int {
        func text(_ string: String) -> Int { 6 * string.utf8.count + 2 }
        func value(_ value: JSONValue) -> Int {
            if case .text(let string) = value { return text(string) }
            return 32   // an integer's 20 characters, a Double's shortest form, null
        }
        var room = 512 + text(record.changedBy) + text(record.entity) + text(record.job)
        for (name, key) in record.key { room += 16 + text(name) + value(key) }
        for property in record.properties {
            room += 160 + text(property.name) + value(property.original) + value(property.ours) + value(property.resolved)
                + value(property.store)
        }
        return room
    }

    private mutating func append(_ record: MergeConflictRecord, first: Bool) {
        raw(first ? "    {\n" : ",\n    {\n")
        raw("      \"changed_by\" : "); string(record.changedBy)
        raw(",\n      \"entity\" : "); string(record.entity)
        raw(",\n      \"job\" : "); string(record.job)
        raw(",\n      \"key\" : {\n")
        if record.key.count == 1, let (name, key) = record.key.first {
            raw("        "); string(name); raw(" : "); value(key)
        } else {
            for (offset, name) in record.key.keys.sorted().enumerated() {
                raw(offset > 0 ? ",\n        " : "        "); string(name); raw(" : "); value(record.key[name]!)
            }
        }
        raw("\n      },\n      \"kind\" : "); string(record.kind.rawValue)
        raw(",\n      \"outcome\" : "); string(record.outcome.rawValue)
        raw(",\n      \"policy\" : "); string(record.policy.rawValue)
        raw(",\n      \"properties\" : [")
        for (offset, property) in record.properties.enumerated() {
            raw(offset > 0 ? ",\n        {\n" : "\n        {\n")
            raw("          \"name\" : "); string(property.name)
            raw(",\n          \"original\" : "); value(property.original)
            raw(",\n          \"ours\" : "); value(property.ours)
            raw(",\n          \"resolved\" : "); value(property.resolved)
            raw(",\n          \"store\" : "); value(property.store)
            raw("\n        }")
        }
        raw(record.properties.isEmpty ? "\n\n      ]\n    }" : "\n      ]\n    }")
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

    private mutating func value(_ value: JSONValue) {
        switch value {
        case .null: raw("null")
        case .integer(let int): integer(int)
        case .real(let double):
            guard double.isFinite else { return raw("null") }
            // As JSONEncoder writes a Double: shortest form, no ".0" on a whole number.
            var text = String(double)
            if text.hasSuffix(".0") { text.removeLast(2) }
            text.withUTF8 { bytes(UnsafeRawBufferPointer($0)) }
        case .text(let text): string(text)
        }
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
    private mutating func string(_ text: String) {
        var text = text
        text.withUTF8 { utf8 in
            byte(0x22)
            guard utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) else {
                bytes(UnsafeRawBufferPointer(utf8))
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
}
